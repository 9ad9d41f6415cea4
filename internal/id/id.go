// Package id makes the prefixed random identifiers of every object
// (inv_, meter_, evt_, …).
package id

import (
	"crypto/rand"
	"strings"
)

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// New returns prefix + "_" + 24 random base62 characters (~142 bits).
func New(prefix string) string {
	return prefix + "_" + Random(24)
}

// Random returns n random base62 characters from crypto/rand.
func Random(n int) string {
	var b strings.Builder
	b.Grow(n)
	buf := make([]byte, n+n/2)
	for b.Len() < n {
		if _, err := rand.Read(buf); err != nil {
			panic("id: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			// 248 = 62*4: rejection sampling keeps the distribution uniform.
			if c < 248 && b.Len() < n {
				b.WriteByte(alphabet[c%62])
			}
		}
	}
	return b.String()
}

package auth

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzKeyShaped checks keyShaped against the regular expression it stands
// for.
func FuzzKeyShaped(f *testing.F) {
	shape := regexp.MustCompile(`^sk_(test|live)_[0-9A-Za-z]{43}$`)
	for _, s := range []string{"sk_test_" + strings.Repeat("aZ9", 14) + "q", "sk_live_" + strings.Repeat("0", 43),
		"sk_live_" + strings.Repeat("0", 42) + "_", "sk_prod_" + strings.Repeat("0", 43), "sk_test_" + strings.Repeat("é", 22), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := keyShaped(s), shape.MatchString(s); got != want {
			t.Fatalf("keyShaped(%q) = %v, the expression says %v", s, got, want)
		}
	})
}

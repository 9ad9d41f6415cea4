package store

import (
	"database/sql/driver"
	"strconv"
	"strings"
)

// The array parameters below send what lib/pq's arrays send, in the text
// form PostgreSQL's array_in reads, built in one allocation of the right
// size: pq grows its buffer as it goes, copies each element on the way and
// copies the result once more, which cost a credit batch's write (some
// forty arrays) more than its rows. A nil slice is a NULL array.

// Texts is a text[] parameter: what pq.StringArray sends.
type Texts []string

// Value is the array's text form: each element quoted, with '"' and '\'
// escaped.
func (a Texts) Value() (driver.Value, error) {
	if a == nil {
		return nil, nil
	}
	n := 2
	for _, s := range a {
		n += len(s) + 3
	}
	return arrayText(len(a), n, func(b *strings.Builder, i int) { quote(b, a[i]) }), nil
}

// NullTexts is a text[] parameter whose nil elements are NULL: what
// pq.GenericArray{A: []*string} sends, without the reflection it spends on
// every element (a tenth of the daemon's CPU on a 500-event ingestion
// batch, which sends three such arrays).
type NullTexts []*string

// Value is the array's text form: each element quoted, with '"' and '\'
// escaped, or NULL.
func (a NullTexts) Value() (driver.Value, error) {
	if a == nil {
		return nil, nil
	}
	n := 2
	for _, s := range a {
		n += 4 // NULL, or two quotes; and a comma
		if s != nil {
			n += len(*s)
		}
	}
	return arrayText(len(a), n, func(b *strings.Builder, i int) {
		if a[i] == nil {
			b.WriteString("NULL")
		} else {
			quote(b, *a[i])
		}
	}), nil
}

// arrayText is the text form of an array of n elements, each written by
// elem, built in one allocation of size bytes.
func arrayText(n, size int, elem func(b *strings.Builder, i int)) string {
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		elem(&b, i)
	}
	b.WriteByte('}')
	return b.String()
}

// quote writes s double-quoted, with '"' and '\' escaped by a '\'.
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	if strings.IndexByte(s, '"') < 0 && strings.IndexByte(s, '\\') < 0 {
		b.WriteString(s)
	} else {
		for i := 0; i < len(s); i++ {
			if s[i] == '"' || s[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
	}
	b.WriteByte('"')
}

// Int64s is a bigint[] (or numeric[]) parameter: what pq.Int64Array sends.
type Int64s []int64

// Value is the array's text form: the decimal numbers, comma separated.
func (a Int64s) Value() (driver.Value, error) {
	if a == nil {
		return nil, nil
	}
	n := 2
	for _, v := range a {
		n += digits(v) + 1
	}
	var num [20]byte
	return arrayText(len(a), n, func(b *strings.Builder, i int) { b.Write(strconv.AppendInt(num[:0], a[i], 10)) }), nil
}

// digits is the length of v in decimal, its sign included.
func digits(v int64) int {
	n := 1
	if v < 0 {
		n++
	}
	for v <= -10 || v >= 10 {
		v /= 10
		n++
	}
	return n
}

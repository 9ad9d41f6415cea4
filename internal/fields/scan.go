package fields

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// This file walks JSON that encoding/json has already found valid, to catch
// what encoding/json lets through silently and PostgreSQL refuses or a
// client would not expect: text that is not valid UTF-8 or holds NUL or a
// lone UTF-16 surrogate (encoding/json turns the last two kinds into U+FFFD,
// so two different inputs would read alike), objects with a key twice (the
// last would win), and numbers too large or too precise for jsonb.

// Limits of PostgreSQL's numeric type, which jsonb stores numbers as.
const (
	maxNumericIntDigits = 131072 // digits before the decimal point
	maxNumericScale     = 16383  // digits after it
	// maxNumericExponent is PostgreSQL's bound on a written exponent
	// (INT_MAX / 2), whatever the digits.
	maxNumericExponent = 1<<30 - 1
)

// objectMapAt is the number of keys past which duplicate detection uses a
// map rather than a linear search.
const objectMapAt = 16

// member is one key of a JSON object and its raw value.
type member struct {
	key string
	val json.RawMessage
}

// scanner walks valid JSON.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// str returns the raw contents of the string at s.i (between the quotes,
// escapes intact) and moves past it.
func (s *scanner) str() []byte {
	s.i++ // opening quote
	start := s.i
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	raw := s.b[start:s.i]
	s.i++
	return raw
}

// skip moves past the value at s.i.
func (s *scanner) skip() {
	switch s.b[s.i] {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default:
		s.literal()
	}
}

// literal moves past a number, true, false or null and returns it.
func (s *scanner) literal() []byte {
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.b[start:s.i]
		}
		s.i++
	}
	return s.b[start:s.i]
}

// key reads an object key at s.i: its text, or what is wrong with it.
func (s *scanner) key() (string, string) {
	raw := s.str()
	if p := textProblem(raw); p != "" {
		return strconv.Quote(apperr.Clip(string(raw))), p
	}
	return unquote(raw), ""
}

// keySet finds repeated keys in one object.
type keySet struct {
	list []string
	set  map[string]bool
}

// add records k and reports whether it was there already.
func (ks *keySet) add(k string) bool {
	if ks.set != nil {
		if ks.set[k] {
			return true
		}
		ks.set[k] = true
		return false
	}
	for _, x := range ks.list {
		if x == k {
			return true
		}
	}
	ks.list = append(ks.list, k)
	if len(ks.list) > objectMapAt {
		ks.set = make(map[string]bool, 2*len(ks.list))
		for _, x := range ks.list {
			ks.set[x] = true
		}
	}
	return false
}

// splitObject returns the members of the valid JSON object b, in order. It
// fails naming the key when a key is not valid text or appears twice.
func splitObject(b []byte) ([]member, error) {
	s := scanner{b: b}
	s.ws()
	s.i++ // '{'
	var out []member
	var keys keySet
	for {
		s.ws()
		if s.b[s.i] == '}' {
			return out, nil
		}
		k, p := s.key()
		if p != "" {
			return nil, fieldError(k, "key "+p)
		}
		if keys.add(k) {
			return nil, fieldError(k, "appears more than once")
		}
		s.ws()
		s.i++ // ':'
		s.ws()
		start := s.i
		s.skip()
		out = append(out, member{key: k, val: b[start:s.i]})
		s.ws()
		if s.b[s.i] == ',' {
			s.i++
		}
	}
}

// splitArray returns the elements of the valid JSON array b.
func splitArray(b []byte) []json.RawMessage {
	s := scanner{b: b}
	s.ws()
	s.i++ // '['
	var out []json.RawMessage
	for {
		s.ws()
		if s.b[s.i] == ']' {
			return out
		}
		start := s.i
		s.skip()
		out = append(out, b[start:s.i])
		s.ws()
		if s.b[s.i] == ',' {
			s.i++
		}
	}
}

// check walks the value at s.i and returns what is wrong with it, if
// anything: malformed text in a string or key, a key twice in one object,
// a number jsonb cannot hold.
func (s *scanner) check() string {
	s.ws()
	switch s.b[s.i] {
	case '"':
		return textProblem(s.str())
	case '{':
		s.i++
		var keys keySet
		for {
			s.ws()
			if s.b[s.i] == '}' {
				s.i++
				return ""
			}
			k, p := s.key()
			if p != "" {
				return "key " + k + " " + p
			}
			if keys.add(k) {
				return "has the key " + strconv.Quote(apperr.Clip(k)) + " more than once"
			}
			s.ws()
			s.i++ // ':'
			if p := s.check(); p != "" {
				return p
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
			}
		}
	case '[':
		s.i++
		for {
			s.ws()
			if s.b[s.i] == ']' {
				s.i++
				return ""
			}
			if p := s.check(); p != "" {
				return p
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
			}
		}
	}
	lit := s.literal()
	if c := lit[0]; c == '-' || (c >= '0' && c <= '9') {
		return numberProblem(lit)
	}
	return ""
}

// valueProblem is check over a whole raw value.
func valueProblem(raw []byte) string {
	s := scanner{b: raw}
	return s.check()
}

// textProblem says what is wrong with the raw contents of a JSON string
// (escapes intact): invalid UTF-8, a NUL character, a lone surrogate.
func textProblem(raw []byte) string {
	if !utf8.Valid(raw) {
		return "must be valid UTF-8"
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if raw[i] != 'u' {
			continue
		}
		r := hex4(raw[i+1 : i+5])
		i += 4
		switch {
		case r == 0:
			return "must not contain the NUL character (\\u0000)"
		case r >= 0xDC00 && r < 0xE000:
			return "must not contain a lone UTF-16 surrogate (\\u" + string(raw[i-3:i+1]) + ")"
		case r >= 0xD800 && r < 0xDC00:
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo := hex4(raw[i+3 : i+7]); lo >= 0xDC00 && lo < 0xE000 {
					i += 6
					continue
				}
			}
			return "must not contain a lone UTF-16 surrogate (\\u" + string(raw[i-3:i+1]) + ")"
		}
	}
	return ""
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unquote decodes the raw contents of a valid JSON string.
func unquote(raw []byte) string {
	for _, c := range raw {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s)
			return s
		}
	}
	return string(raw)
}

// numberProblem says why a valid JSON number cannot be stored in jsonb
// (PostgreSQL's numeric): too many digits before the decimal point, too
// many after it, or an exponent out of range.
func numberProblem(n []byte) string {
	const tooBig = "holds a number PostgreSQL cannot store (at most 131072 digits before the decimal point and 16383 after)"
	i := 0
	if n[i] == '-' {
		i++
	}
	start := i
	for i < len(n) && n[i] >= '0' && n[i] <= '9' {
		i++
	}
	intDigits := n[start:i]
	var frac []byte
	if i < len(n) && n[i] == '.' {
		i++
		start = i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
		frac = n[start:i]
	}
	exp := 0
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		neg := false
		if n[i] == '+' || n[i] == '-' {
			neg = n[i] == '-'
			i++
		}
		for ; i < len(n); i++ {
			exp = exp*10 + int(n[i]-'0')
			if exp >= maxNumericExponent {
				return tooBig
			}
		}
		if neg {
			exp = -exp
		}
	}
	if len(frac)-exp > maxNumericScale {
		return tooBig
	}
	// The decimal exponent of the leading non-zero digit; a zero has none.
	lead, found := 0, false
	for j, c := range intDigits {
		if c != '0' {
			lead, found = len(intDigits)-1-j, true
			break
		}
	}
	if !found {
		for j, c := range frac {
			if c != '0' {
				lead, found = -(j + 1), true
				break
			}
		}
	}
	if found && lead+exp >= maxNumericIntDigits {
		return tooBig
	}
	return ""
}

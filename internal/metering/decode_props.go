package metering

import "unicode/utf8"

// Checking an event's properties with json.Valid and then with the field
// rules (fields.JSONProblem) walked them twice, about 4% of the daemon's
// CPU on ingestion. value checks them in one pass, in the common shape
// only: strings without \u escapes, numbers without an exponent and of at
// most maxPlainDigits digits on each side of the point, objects of at most
// maxPlainKeys keys, nesting at most maxPlainDepth deep. On anything else
// it gives up, and the body is decoded the general way, which says what is
// wrong if anything is; what it accepts is valid JSON that the field rules
// accept (a test holds it to that).
const (
	maxPlainDigits = 1000
	maxPlainKeys   = 32
	maxPlainDepth  = 32
)

// value reads one JSON value of the common shape; keys holds the keys of
// the objects being read, to find a repeat.
func (p *batchParser) value(keys []string, depth int) ([]string, bool) {
	if depth > maxPlainDepth {
		return keys, false
	}
	p.ws()
	if p.i >= len(p.b) {
		return keys, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.text()
		return keys, ok
	case c == '{':
		p.i++
		start := len(keys)
		if p.eat('}') {
			return keys, true
		}
		for {
			p.ws()
			k, ok := p.text()
			if !ok || len(keys)-start == maxPlainKeys || !p.eat(':') {
				return keys, false
			}
			for _, seen := range keys[start:] {
				if seen == k {
					return keys, false
				}
			}
			keys = append(keys, k)
			if keys, ok = p.value(keys, depth+1); !ok {
				return keys, false
			}
			if p.eat('}') {
				return keys[:start], true
			}
			if !p.eat(',') {
				return keys, false
			}
		}
	case c == '[':
		p.i++
		if p.eat(']') {
			return keys, true
		}
		for {
			var ok bool
			if keys, ok = p.value(keys, depth+1); !ok {
				return keys, false
			}
			if p.eat(']') {
				return keys, true
			}
			if !p.eat(',') {
				return keys, false
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return keys, p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return keys, true
		}
	}
	return keys, false
}

// text reads a JSON string, at p.i, of valid UTF-8 without control
// characters, \u or \/ escapes, and returns its raw contents, escapes
// intact: without those two, a string has one raw form, so two keys are
// the same exactly when their raw contents are.
func (p *batchParser) text() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	p.i++
	start, ascii := p.i, true
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			raw := p.src[start:p.i]
			p.i++
			return raw, ascii || utf8.ValidString(raw)
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			switch p.b[p.i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		default:
			ascii = ascii && c < utf8.RuneSelf
			p.i++
		}
	}
	return "", false
}

// number reads a JSON number without an exponent, of at most
// maxPlainDigits digits on each side of the point: one PostgreSQL stores.
func (p *batchParser) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if n := p.i - start; n == 0 || n > maxPlainDigits || n > 1 && p.b[start] == '0' {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		start = p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		if n := p.i - start; n == 0 || n > maxPlainDigits {
			return false
		}
	}
	return p.i >= len(p.b) || p.b[p.i] != 'e' && p.b[p.i] != 'E'
}

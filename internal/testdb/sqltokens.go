package testdb

import (
	"regexp"
	"strings"
)

var tokenRE = regexp.MustCompile(`\$\d+|[a-z_][a-z0-9_$]*|[0-9.]+|::|<=|>=|<>|!=|[(),.=;*<>+\-/|\[\]:]`)

// tokenize lowercases query and splits it into tokens, without comments,
// string literals and quoted identifiers' quotes.
func tokenize(query string) []string {
	var b strings.Builder
	q := query
	for i := 0; i < len(q); i++ {
		switch {
		case strings.HasPrefix(q[i:], "--"):
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				i = len(q)
			} else {
				i += end + 3
			}
		case q[i] == '\'':
			i++
			for i < len(q) && !(q[i] == '\'' && (i+1 >= len(q) || q[i+1] != '\'')) {
				if q[i] == '\'' {
					i++
				}
				i++
			}
			b.WriteString(" '' ")
		case q[i] == '"':
			// a quoted identifier: keep its name
		default:
			b.WriteByte(q[i])
		}
	}
	return tokenRE.FindAllString(strings.ToLower(b.String()), -1)
}

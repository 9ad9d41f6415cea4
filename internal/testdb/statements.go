package testdb

import (
	"context"
	"sort"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
)

// Statements records the distinct statements a pool sends (install Record
// as store.Config.Trace) and holds them to the rules that keep merchant
// tables distributable by merchant_id:
//
//   - a statement that locks rows (FOR UPDATE, FOR SHARE, SKIP LOCKED)
//     filters the locking query on one merchant_id (= a parameter), unless
//     it reads only global tables;
//   - a statement that reads or writes two merchant tables (or one twice)
//     equates their merchant_id, directly or through a parameter, a CTE or
//     a derived table.
//
// The check reads the SQL's text (tokens, parentheses, aliases), not a
// parse tree: it knows the shapes this code base writes, and a statement it
// cannot follow is reported, to be rewritten or allowed in the caller's
// list with the reason.
type Statements struct {
	mu   sync.Mutex
	seen map[string]bool
}

// Record notes query; safe for concurrent use.
func (s *Statements) Record(query string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[query] = true
}

// All returns the distinct statements recorded, sorted.
func (s *Statements) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.seen))
	for q := range s.seen {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// GlobalTables names the tables that carry a merchant_id but stay whole on
// one node when merchant tables are distributed (reference tables), each
// with why: small, and looked up before the merchant is known, or referring
// only to tables like it. Every other table with a merchant_id is
// distributed by it.
func GlobalTables() map[string]string {
	return map[string]string{
		"api_keys":               "looked up by the key's hash on every request",
		"oauth_grants":           "refers to api_keys and oauth_clients",
		"oauth_codes":            "looked up by the code's hash",
		"oauth_tokens":           "looked up by the token's hash",
		"dashboard_users":        "looked up by email at sign-in",
		"dashboard_sessions":     "looked up by the cookie's hash",
		"dashboard_setup_tokens": "looked up by the token's hash",
	}
}

// DistributedTables returns the tables of db with a merchant_id column that
// are not global (GlobalTables).
func DistributedTables(t testing.TB, db *store.DB) map[string]bool {
	t.Helper()
	var names []string
	err := db.SelectContext(context.Background(), &names, `SELECT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
			AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'merchant_id' AND NOT a.attisdropped)`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		if GlobalTables()[n] == "" {
			out[n] = true
		}
	}
	return out
}

// Check fails t for each recorded statement that breaks a rule (Violation)
// on db's distributed tables.
func (s *Statements) Check(t testing.TB, db *store.DB) {
	t.Helper()
	tables := DistributedTables(t, db)
	for _, q := range s.All() {
		if why := Violation(q, tables); why != "" {
			t.Errorf("statement %s:\n%s", why, q)
		}
	}
}

// Violation returns why query breaks a rule for the distributed tables,
// or "".
func Violation(query string, distributed map[string]bool) string {
	// The branches of a UNION (INTERSECT, EXCEPT) at the top are queries
	// of their own: they share no rows, so each is checked alone.
	toks := tokenize(query)
	depth, start := 0, 0
	for i, tok := range toks {
		switch tok {
		case "(":
			depth++
		case ")":
			depth--
		case "union", "intersect", "except":
			if depth == 0 {
				if why := violation(toks[start:i], distributed); why != "" {
					return why
				}
				start = i + 1
			}
		}
	}
	return violation(toks[start:], distributed)
}

func violation(toks []string, distributed map[string]bool) string {
	c := &checker{toks: toks, tables: distributed, parent: map[string]string{}}
	c.scan()
	if why := c.locks(); why != "" {
		return why
	}
	return c.joins()
}

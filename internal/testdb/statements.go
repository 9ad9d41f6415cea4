package testdb

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"
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

// ref is one use of a distributed table: its alias (or name) and the
// parenthesised block it sits in.
type ref struct {
	alias string
	block int
	pos   int
}

type checker struct {
	toks   []string
	tables map[string]bool
	// block[i] is the index of the '(' that encloses token i, -1 at top.
	block []int
	refs  []ref
	// parent is a union-find over nodes: aliases ("a:x"), parameters
	// ("p:$1") and blocks' unqualified merchant_id ("b:12").
	parent map[string]string
}

var keywords = map[string]bool{
	"where": true, "join": true, "left": true, "right": true, "inner": true, "full": true, "cross": true,
	"on": true, "using": true, "set": true, "group": true, "order": true, "limit": true, "for": true,
	"returning": true, "union": true, "except": true, "intersect": true, "offset": true, "having": true,
	"natural": true, "lateral": true, "values": true, "select": true, "window": true, "as": true, "with": true,
}

func (c *checker) scan() {
	stack := []int{-1}
	c.block = make([]int, len(c.toks))
	for i, tok := range c.toks {
		c.block[i] = stack[len(stack)-1]
		switch tok {
		case "(":
			stack = append(stack, i)
		case ")":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			c.block[i] = stack[len(stack)-1]
		}
	}
	for i, tok := range c.toks {
		switch tok {
		case "from", "join", "update", "using":
			if tok == "using" && c.at(i+1) == "(" {
				c.usingMerchant(i)
				continue
			}
			c.fromItem(i + 1)
		case ",":
			if c.inFromList(i) {
				c.fromItem(i + 1)
			}
		}
	}
	// A CTE's name (name AS ( … )) and a derived table's alias (( … ) x)
	// stand for the first distributed table they read.
	for i, tok := range c.toks {
		if tok != ")" {
			continue
		}
		open := c.matching(i)
		if alias := c.aliasAfter(i + 1); alias != "" && c.derived(open) {
			c.linkBlock(alias, open, i)
		}
		if c.at(open-1) == "as" && isIdent(c.at(open-2)) && (c.at(open-3) == "with" || c.at(open-3) == "," || c.at(open-3) == "recursive") {
			c.linkBlock(c.at(open-2), open, i)
			if node := c.insertedMerchant(open + 1); node != "" {
				c.union("a:"+c.at(open-2), node)
			}
		}
	}
	c.equalities()
}

func (c *checker) at(i int) string {
	if i < 0 || i >= len(c.toks) {
		return ""
	}
	return c.toks[i]
}

func isIdent(tok string) bool {
	return tok != "" && (tok[0] == '_' || tok[0] >= 'a' && tok[0] <= 'z') && !keywords[tok]
}

// fromItem reads "table [AS] alias" at i, noting a distributed table.
func (c *checker) fromItem(i int) {
	if c.at(i) == "only" {
		i++
	}
	name := c.at(i)
	if !c.tables[name] || c.at(i+1) == "(" || c.at(i+1) == "." {
		return
	}
	alias := name
	if a := c.aliasAfter(i + 1); a != "" {
		alias = a
	}
	c.refs = append(c.refs, ref{alias: alias, block: c.block[i], pos: i})
}

func (c *checker) aliasAfter(i int) string {
	if c.at(i) == "as" {
		i++
	}
	if isIdent(c.at(i)) {
		return c.at(i)
	}
	return ""
}

// inFromList reports whether the comma at i separates FROM items: the
// nearest clause keyword before it, in its block, is FROM.
func (c *checker) inFromList(i int) bool {
	for j := i - 1; j >= 0; j-- {
		if c.block[j] != c.block[i] || c.toks[j] == "(" || c.toks[j] == ")" {
			continue
		}
		switch c.toks[j] {
		case "from", "join", "on", "using":
			return true
		case "select", "where", "set", "values", "returning", "by", "into", "with":
			return false
		}
	}
	return false
}

func (c *checker) matching(close int) int {
	depth := 0
	for j := close; j >= 0; j-- {
		switch c.toks[j] {
		case ")":
			depth++
		case "(":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return 0
}

// derived reports whether the '(' at open starts a derived table.
func (c *checker) derived(open int) bool {
	switch c.at(open - 1) {
	case "from", "join", "lateral", ",":
		return c.at(open+1) == "select" || c.at(open+1) == "with"
	}
	return false
}

// linkBlock links alias to the first distributed table read between the
// parentheses at open and close (nested queries included).
func (c *checker) linkBlock(alias string, open, close int) {
	for _, r := range c.refs {
		if r.pos > open && r.pos < close {
			c.union("a:"+alias, "a:"+r.alias)
			return
		}
	}
}

// insertedMerchant reads "INSERT INTO t (…, merchant_id, …) SELECT|VALUES
// …" at i and returns the node of the value given to merchant_id when it
// is a parameter or a merchant_id column: a CTE that inserts rows stands
// for that merchant.
func (c *checker) insertedMerchant(i int) string {
	if c.at(i) != "insert" || c.at(i+1) != "into" || c.at(i+3) != "(" {
		return ""
	}
	k, col := -1, 0
	j := i + 4
	for ; j < len(c.toks) && c.toks[j] != ")"; j++ {
		switch c.toks[j] {
		case ",":
			col++
		case "merchant_id":
			k = col
		}
	}
	if k < 0 {
		return ""
	}
	j++
	switch c.at(j) {
	case "select":
		j++
	case "values":
		j += 2
	default:
		return ""
	}
	depth := 0
	for col = 0; j < len(c.toks); j++ {
		if depth == 0 && col == k {
			node, next := c.operand(j)
			if node != "" && (c.at(next) == "," || c.at(next) == ")" || c.at(next) == "from") {
				return node
			}
			return ""
		}
		switch c.toks[j] {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				col++
			}
		}
	}
	return ""
}

// usingMerchant links the table joined with USING (merchant_id, …) to the
// item before it.
func (c *checker) usingMerchant(i int) {
	if c.at(i+2) != "merchant_id" {
		return
	}
	var mine, prev string
	for j := len(c.refs) - 1; j >= 0; j-- {
		r := c.refs[j]
		if r.block != c.block[i] {
			continue
		}
		if mine == "" {
			mine = r.alias
		} else {
			prev = r.alias
			break
		}
	}
	if mine != "" && prev != "" {
		c.union("a:"+mine, "a:"+prev)
	}
}

// operand reads a merchant_id operand ending at or starting from i: it
// returns its node and the index after it.
func (c *checker) operand(i int) (node string, next int) {
	switch {
	case isIdent(c.at(i)) && c.at(i+1) == "." && c.at(i+2) == "merchant_id":
		return "a:" + c.at(i), i + 3
	case c.at(i) == "merchant_id" && c.at(i-1) != ".":
		return "b:" + strconv.Itoa(c.block[i]), i + 1
	case strings.HasPrefix(c.at(i), "$"):
		next = i + 1
		if c.at(next) == "::" {
			next += 2
		}
		return "p:" + c.at(i), next
	}
	return "", i
}

// equalities links both sides of every "x = y" whose sides are merchant_id
// columns or parameters, and a block's unqualified merchant_id to the
// distributed tables read in that block. A ctid equality ("d.ctid =
// v.row") links its two aliases too: the batch statements find a row by
// its key in a LATERAL probe and change it again by its address, the same
// row of the same merchant.
func (c *checker) equalities() {
	for i := range c.toks {
		if isIdent(c.at(i)) && c.at(i+1) == "." && c.at(i+2) == "ctid" && c.at(i+3) == "=" && isIdent(c.at(i+4)) && c.at(i+5) == "." {
			c.union("a:"+c.at(i), "a:"+c.at(i+4))
		}
		left, next := c.operand(i)
		if left == "" || c.at(next) != "=" {
			continue
		}
		if right, _ := c.operand(next + 1); right != "" {
			c.union(left, right)
		}
	}
	for _, r := range c.refs {
		if b := "b:" + strconv.Itoa(r.block); c.parent[b] != "" {
			c.union(b, "a:"+r.alias)
		}
	}
}

func (c *checker) find(n string) string {
	for {
		p, ok := c.parent[n]
		if !ok || p == n {
			return n
		}
		n = p
	}
}

func (c *checker) union(a, b string) {
	for _, n := range []string{a, b} {
		if c.parent[n] == "" {
			c.parent[n] = n
		}
	}
	c.parent[c.find(a)] = c.find(b)
}

// locks checks each locking clause: the query it ends must read a
// distributed table whose merchant_id is equated to a parameter.
func (c *checker) locks() string {
	for i, tok := range c.toks {
		lock := tok == "for" && (c.at(i+1) == "update" || c.at(i+1) == "share" || c.at(i+1) == "no" || c.at(i+1) == "key") ||
			tok == "skip" && c.at(i+1) == "locked"
		if !lock || tok == "skip" && c.hasForBefore(i) {
			continue
		}
		var mine []string
		for _, r := range c.refs {
			if r.block == c.block[i] {
				mine = append(mine, r.alias)
			}
		}
		if len(mine) == 0 {
			continue // only global tables
		}
		if !c.toParam(mine) {
			return "locks rows of " + strings.Join(mine, ", ") + " without filtering on one merchant_id"
		}
	}
	return ""
}

func (c *checker) hasForBefore(i int) bool {
	for j := i - 1; j >= 0 && j >= i-6; j-- {
		if c.toks[j] == "for" {
			return true
		}
	}
	return false
}

// toParam reports whether every alias is tied to a parameter.
func (c *checker) toParam(aliases []string) bool {
	roots := map[string]bool{}
	for n := range c.parent {
		if strings.HasPrefix(n, "p:") {
			roots[c.find(n)] = true
		}
	}
	for _, a := range aliases {
		if !roots[c.find("a:"+a)] {
			return false
		}
	}
	return true
}

// joins checks that all distributed tables of the statement share one
// merchant_id.
func (c *checker) joins() string {
	if len(c.refs) < 2 {
		return ""
	}
	root := c.find("a:" + c.refs[0].alias)
	for _, r := range c.refs[1:] {
		if c.find("a:"+r.alias) != root {
			return "reads " + c.refs[0].alias + " and " + r.alias + " without equating their merchant_id"
		}
	}
	return ""
}

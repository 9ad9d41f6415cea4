package testdb

import (
	"strconv"
	"strings"
)

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

package testdb

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

package cmd

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// tablePrinter prints aligned columns that fit the terminal's width (80
// when it is not known). It pads cells itself rather than use
// text/tabwriter, because tabwriter counts colour escape codes as width and
// would misalign a coloured header.
//
// A table too wide gives way in this order: text columns are cut and
// secondary ids elided (down to a floor that keeps them recognisable),
// then optional columns are dropped, least useful first, each drop giving
// its room back to the others. The first column (the row's own id) is
// never shortened: it is what people copy into the next command. --json
// has every field in full.
type tablePrinter struct {
	io      *IO
	header  []string
	rows    [][]string
	right   map[int]bool
	shrink  map[int]shrinkMode
	floors  map[int]int // a column's own floor, instead of minCut or minElide
	dropped []int       // columns to drop, in order
}

type shrinkMode int

const (
	shrinkCut   shrinkMode = iota + 1 // free text: cut at the end, with …
	shrinkElide                       // an id or address: …in the middle
)

// Floors under which a column is not shortened further.
const (
	minCut   = 16
	minElide = 13 // cus_2b8f…4c1e
)

func newTablePrinter(streams *IO, header ...string) *tablePrinter {
	return &tablePrinter{io: streams, header: header, right: map[int]bool{}, shrink: map[int]shrinkMode{}, floors: map[int]int{}}
}

// alignRight right-aligns column i (amounts).
func (t *tablePrinter) alignRight(i int) *tablePrinter { t.right[i] = true; return t }

// cut lets columns of free text be cut on a narrow terminal.
func (t *tablePrinter) cut(cols ...int) *tablePrinter {
	for _, i := range cols {
		t.shrink[i] = shrinkCut
	}
	return t
}

// elide lets columns of ids or addresses lose their middle.
func (t *tablePrinter) elide(cols ...int) *tablePrinter {
	for _, i := range cols {
		t.shrink[i] = shrinkElide
	}
	return t
}

// atLeast keeps column i at least n cells wide when it is shortened (a URL
// cut at 16 says little).
func (t *tablePrinter) atLeast(i, n int) *tablePrinter { t.floors[i] = n; return t }

// drop names the columns that may be left out, least useful first.
func (t *tablePrinter) drop(cols ...int) *tablePrinter {
	t.dropped = append(t.dropped, cols...)
	return t
}

func (t *tablePrinter) row(cells ...string) {
	for i, c := range cells {
		cells[i] = clean(c)
	}
	t.rows = append(t.rows, cells)
}

func (t *tablePrinter) print() error {
	all := t.rows
	if len(t.header) > 0 {
		all = append([][]string{t.header}, t.rows...)
	}
	widths, keep := t.layout(all)
	var b strings.Builder
	for n, r := range all {
		var cells []string
		var ws []int
		var right []bool
		for i, c := range r {
			if i < len(keep) && !keep[i] {
				continue
			}
			c = t.shorten(i, c, widths[i]) // never a header: see layout's floors
			cells, ws, right = append(cells, c), append(ws, widths[i]), append(right, t.right[i])
		}
		for i, c := range cells {
			pad := strings.Repeat(" ", max(ws[i]-ansi.StringWidth(c), 0))
			if i == len(cells)-1 && !right[i] {
				pad = "" // no trailing spaces
			}
			if n == 0 && len(t.header) > 0 && t.io.Color() {
				c = bold(c)
			}
			if right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			if i < len(cells)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(t.io.Out, b.String())
	return err
}

// layout returns each column's width and whether it is shown, so that the
// table fits the output's width where it can.
func (t *tablePrinter) layout(all [][]string) (widths []int, keep []bool) {
	var natural []int
	for _, r := range all {
		for i, c := range r {
			if i == len(natural) {
				natural = append(natural, 0)
			}
			natural[i] = max(natural[i], ansi.StringWidth(c))
		}
	}
	// cutFloor shortens only text; floor ids as well.
	cutFloor, floor := append([]int(nil), natural...), append([]int(nil), natural...)
	for i, w := range natural {
		head := 0
		if i < len(t.header) {
			head = ansi.StringWidth(t.header[i])
		}
		own, ok := t.floors[i]
		switch {
		case i == 0:
		case t.shrink[i] == shrinkCut:
			if !ok {
				own = minCut
			}
			cutFloor[i] = max(min(w, own), head)
			floor[i] = cutFloor[i]
		case t.shrink[i] == shrinkElide:
			if !ok {
				own = minElide
			}
			floor[i] = max(min(w, own), head)
		}
	}
	keep = make([]bool, len(natural))
	for i := range keep {
		keep[i] = true
	}
	limit := t.io.width()
	// Cut text first, then drop columns; ids lose their middle only when
	// that is not enough, since an elided id cannot be copied.
	for d := 0; ; d++ {
		switch {
		case total(natural, keep) <= limit:
			return natural, keep
		case total(cutFloor, keep) <= limit:
			return shrinkTo(natural, cutFloor, keep, limit), keep
		case d == len(t.dropped):
			return shrinkTo(shrinkTo(natural, cutFloor, keep, limit), floor, keep, limit), keep
		}
		if c := t.dropped[d]; c < len(keep) {
			keep[c] = false
		}
	}
}

// shrinkTo narrows the widest column above its floor, one cell at a time,
// until the shown columns fit limit or every one is at its floor.
func shrinkTo(natural, floor []int, keep []bool, limit int) []int {
	widths := append([]int(nil), natural...)
	for excess := total(widths, keep) - limit; excess > 0; excess-- {
		widest := -1
		for i, w := range widths {
			if keep[i] && w > floor[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	return widths
}

// total is the width of the shown columns with their two-space gaps.
func total(widths []int, keep []bool) int {
	n, sum := 0, 0
	for i, w := range widths {
		if keep[i] {
			n, sum = n+1, sum+w
		}
	}
	return sum + 2*max(n-1, 0)
}

// shorten fits cell c of column i into w cells.
func (t *tablePrinter) shorten(i int, c string, w int) string {
	if ansi.StringWidth(c) <= w {
		return c
	}
	if t.shrink[i] == shrinkElide {
		return elideMiddle(c, w)
	}
	return ansi.Truncate(c, w, "…")
}

// elideMiddle keeps an id's start (its prefix says what it is) and end.
func elideMiddle(s string, w int) string {
	r := []rune(s)
	if len(r) <= w || w < 3 {
		return s
	}
	head := w / 2
	tail := w - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

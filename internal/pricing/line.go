package pricing

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/internal/wire"
)

// Wire returns the line's public form (quantities and amounts as strings of
// base units, like every amount).
func (l Line) Wire() wire.PaymentLine {
	w := wire.PaymentLine{Kind: string(l.Kind), Description: l.Description, Amount: "0"}
	if l.Amount != nil {
		w.Amount = l.Amount.String()
	}
	if l.Quantity != nil {
		q := l.Quantity.String()
		w.Quantity = &q
	}
	if l.Tier > 0 {
		t := l.Tier
		w.Tier = &t
	}
	if l.UnitAmount != nil {
		u := l.UnitAmount.String()
		w.UnitAmount = &u
	}
	return w
}

// WireLines returns the public form of lines, never nil (an empty list is
// `[]` on the wire).
func WireLines(lines []Line) []wire.PaymentLine {
	out := make([]wire.PaymentLine, len(lines))
	for i, l := range lines {
		out[i] = l.Wire()
	}
	return out
}

// group writes n in decimal with thousands separators: 12345 → "12,345".
func group(n *big.Int) string {
	s := n.String()
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

// units writes "1 unit", "12,345 units".
func units(n *big.Int) string {
	if n.IsInt64() && n.Int64() == 1 {
		return "1 unit"
	}
	return group(n) + " units"
}

func itoa(i int) string { return strconv.Itoa(i) }

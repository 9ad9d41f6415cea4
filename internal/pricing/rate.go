package pricing

import (
	"math/big"
	"slices"

	"github.com/tollgatehq/tollgate/internal/money"
)

// Rating is how one period's usage became an amount.
type Rating struct {
	// Quantity is the usage rated (never negative).
	Quantity *big.Int
	// Amount is the rated amount in base units, before any cap. It is exact
	// and may exceed money.Amount for huge usage; Cap brings it into range.
	Amount *big.Int
	// Lines explain Amount: their amounts add up to it.
	Lines []Line
}

// Billable reports whether the period should be charged: usage is not zero
// and neither is the rated amount. Nothing is charged for a period
// with zero usage, whatever the kind, while Rate prices a flat model at its
// amount even for zero usage (the fee is per period); the engine makes that
// call with Billable.
func (r Rating) Billable() bool {
	return r.Quantity != nil && r.Quantity.Sign() > 0 && r.Amount != nil && r.Amount.Sign() > 0
}

// LineKind says what a line accounts for.
type LineKind string

// The kinds of line.
const (
	// LineUsage prices Quantity units at UnitAmount (per package for
	// package pricing).
	LineUsage LineKind = "usage"
	// LineIncluded counts units that are free under includedUnits.
	LineIncluded LineKind = "included"
	// LineFlat is a flat model's fee.
	LineFlat LineKind = "flat"
	// LineCap takes off what the plan's per-period cap does not allow; its
	// Amount is negative.
	LineCap LineKind = "cap"
)

// Line is one step of a rating, for people: which units, at which tier and
// unit amount, for how much.
type Line struct {
	Kind        LineKind
	Description string // e.g. "10,001–50,000 × 8"
	// Quantity is the number of units the line covers (the period's whole
	// usage for a flat line); nil on a cap line.
	Quantity *big.Int
	// Tier is the 1-based tier of a tiered model, 0 otherwise.
	Tier int
	// UnitAmount is the price per unit (per package for package); nil on
	// flat and cap lines.
	UnitAmount *money.Amount
	Amount     *big.Int
}

// Rate prices quantity units of usage with the model, exactly:
//   - per_unit: max(0, q − includedUnits) × unitAmount;
//   - package: ceil(q / packageSize) × unitAmount;
//   - tiered graduated: each unit at the unit amount of its own tier (a tier
//     covers units up to and including its upTo);
//   - tiered volume: every unit at the unit amount of the tier q falls in
//     (q = 0 falls in the first);
//   - flat: amount, whatever q, including 0 (see Rating.Billable for zero
//     usage).
//
// A nil or negative quantity counts as 0. Rate returns at least one line
// and never panics, even for a model that fails Validate.
func (m Model) Rate(quantity *big.Int) Rating {
	q := new(big.Int)
	if quantity != nil && quantity.Sign() > 0 {
		q.Set(quantity)
	}
	var lines []Line
	switch m.Kind {
	case PerUnit:
		lines = m.perUnit(q)
	case Package:
		lines = m.pkg(q)
	case Tiered:
		if m.Mode == Volume {
			lines = m.volume(q)
		} else {
			lines = m.graduated(q)
		}
	case Flat:
		lines = []Line{{Kind: LineFlat, Quantity: new(big.Int).Set(q), Amount: big.NewInt(int64(m.Amount)),
			Description: "flat fee for the period (" + units(q) + " used)"}}
	}
	if len(lines) == 0 {
		lines = []Line{usage(q, 0, 0, "no price for "+units(q))}
	}
	total := new(big.Int)
	for _, l := range lines {
		total.Add(total, l.Amount)
	}
	return Rating{Quantity: q, Amount: total, Lines: lines}
}

// usage is a line of n units at unit each.
func usage(n *big.Int, tier int, unit money.Amount, desc string) Line {
	return Line{Kind: LineUsage, Description: desc, Quantity: new(big.Int).Set(n), Tier: tier,
		UnitAmount: &unit, Amount: new(big.Int).Mul(n, big.NewInt(int64(unit)))}
}

func (m Model) perUnit(q *big.Int) []Line {
	var lines []Line
	included := big.NewInt(max(m.IncludedUnits, 0))
	if included.Sign() > 0 && q.Sign() > 0 {
		free := minInt(q, included)
		desc := units(free) + " included"
		if free.Cmp(included) < 0 {
			desc += " (of " + group(included) + ")"
		}
		zero := money.Amount(0)
		lines = append(lines, Line{Kind: LineIncluded, Description: desc, Quantity: free, UnitAmount: &zero, Amount: new(big.Int)})
	}
	billable := new(big.Int).Sub(q, included)
	if billable.Sign() < 0 {
		billable.SetInt64(0)
	}
	if billable.Sign() > 0 || len(lines) == 0 {
		desc := units(billable) + " × " + m.UnitAmount.String()
		if included.Sign() > 0 {
			desc += " beyond the included " + group(included)
		}
		lines = append(lines, usage(billable, 0, m.UnitAmount, desc))
	}
	return lines
}

func (m Model) pkg(q *big.Int) []Line {
	size := big.NewInt(max(m.PackageSize, 1))
	packages := new(big.Int).Add(q, size)
	packages.Sub(packages, big.NewInt(1)).Quo(packages, size)
	noun := " packages"
	if packages.Cmp(big.NewInt(1)) == 0 {
		noun = " package"
	}
	l := usage(packages, 0, m.UnitAmount,
		units(q)+" in "+group(packages)+noun+" of "+group(size)+" × "+m.UnitAmount.String())
	l.Quantity = new(big.Int).Set(q) // the line counts units; the amount is per package
	return []Line{l}
}

func (m Model) graduated(q *big.Int) []Line {
	var lines []Line
	lower := new(big.Int) // units priced by the tiers before this one
	one := big.NewInt(1)
	for i, t := range m.Tiers {
		if q.Cmp(lower) <= 0 {
			break
		}
		upper := q
		if t.UpTo != nil {
			upper = minInt(q, big.NewInt(*t.UpTo))
		}
		n := new(big.Int).Sub(upper, lower)
		if n.Sign() > 0 {
			first := new(big.Int).Add(lower, one)
			desc := group(first)
			if n.Cmp(one) > 0 {
				desc += "–" + group(upper)
			}
			lines = append(lines, usage(n, i+1, t.UnitAmount, desc+" × "+t.UnitAmount.String()))
			lower = upper
		}
	}
	if len(lines) == 0 && len(m.Tiers) > 0 {
		u := m.Tiers[0].UnitAmount
		lines = append(lines, usage(q, 1, u, units(q)+" × "+u.String()))
	}
	return lines
}

func (m Model) volume(q *big.Int) []Line {
	if len(m.Tiers) == 0 {
		return nil
	}
	i := len(m.Tiers) - 1
	for j, t := range m.Tiers {
		if t.UpTo == nil || q.Cmp(big.NewInt(*t.UpTo)) <= 0 {
			i = j
			break
		}
	}
	t := m.Tiers[i]
	from := int64(1)
	if i > 0 && m.Tiers[i-1].UpTo != nil {
		from = *m.Tiers[i-1].UpTo + 1
	}
	span := group(big.NewInt(from)) + " and up"
	if t.UpTo != nil {
		span = group(big.NewInt(from)) + "–" + group(big.NewInt(*t.UpTo))
	}
	desc := units(q) + " at tier " + itoa(i+1) + " (" + span + ") × " + t.UnitAmount.String()
	return []Line{usage(q, i+1, t.UnitAmount, desc)}
}

// Cap applies a plan's per-period cap: it returns min(rated, cap) and the
// rating's lines, plus a cap line (with the negative difference, so the
// lines still add up to the charge) when the cap cut the amount. A negative
// cap counts as 0. r must come from Rate.
func Cap(r Rating, limit money.Amount) (charged money.Amount, lines []Line) {
	limit = max(limit, 0)
	lines = slices.Clone(r.Lines)
	rated := r.Amount
	if rated == nil {
		rated = new(big.Int)
	}
	capped := big.NewInt(int64(limit))
	if rated.Cmp(capped) <= 0 {
		return money.Amount(rated.Int64()), lines
	}
	lines = append(lines, Line{
		Kind:        LineCap,
		Description: "capped at " + group(capped) + " per period (rated " + group(rated) + ")",
		Amount:      new(big.Int).Sub(capped, rated),
	})
	return limit, lines
}

func minInt(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}

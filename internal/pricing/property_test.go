package pricing

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tollgatehq/tollgate/internal/money"
)

// bruteForce prices usage one unit at a time, the way the rules read in
// the usage guide, with plain int64 sums: the reference Rate must agree with.
func bruteForce(m Model, q int64) int64 {
	tierOf := func(unit int64) Tier { // the tier whose range holds unit (1-based)
		for _, t := range m.Tiers {
			if t.UpTo == nil || unit <= *t.UpTo {
				return t
			}
		}
		panic("no tier")
	}
	var total int64
	switch m.Kind {
	case Flat:
		return int64(m.Amount)
	case Tiered:
		if m.Mode == Volume {
			price := tierOf(max(q, 1)).UnitAmount // zero usage falls in the first tier
			for unit := int64(1); unit <= q; unit++ {
				total += int64(price)
			}
			return total
		}
	}
	for unit := int64(1); unit <= q; unit++ {
		switch m.Kind {
		case PerUnit:
			if unit > m.IncludedUnits {
				total += int64(m.UnitAmount)
			}
		case Package:
			if (unit-1)%m.PackageSize == 0 { // the first unit of each package buys it
				total += int64(m.UnitAmount)
			}
		case Tiered:
			total += int64(tierOf(unit).UnitAmount)
		}
	}
	return total
}

// randomModel draws a valid model whose interesting boundaries fall within
// a few thousand units.
func randomModel(r *rand.Rand) Model {
	amount := func() money.Amount {
		if r.IntN(8) == 0 {
			return 0
		}
		return money.Amount(r.IntN(1000))
	}
	switch r.IntN(5) {
	case 0:
		return Model{Kind: PerUnit, UnitAmount: amount(), IncludedUnits: int64(r.IntN(3) * r.IntN(2000))}
	case 1:
		return Model{Kind: Package, UnitAmount: amount(), PackageSize: 1 + int64(r.IntN(3)*r.IntN(700))}
	case 2:
		return Model{Kind: Flat, Amount: amount()}
	}
	mode := Graduated
	if r.IntN(2) == 0 {
		mode = Volume
	}
	n := 1 + r.IntN(8)
	tiers := make([]Tier, n)
	var upTo int64
	for i := range tiers {
		tiers[i].UnitAmount = amount()
		if i < n-1 {
			upTo += 1 + int64(r.IntN(600))
			tiers[i].UpTo = up(upTo)
		}
	}
	return Model{Kind: Tiered, Mode: mode, Tiers: tiers}
}

func TestRateMatchesBruteForce(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20260701, 10))
	for i := 0; i < 20000; i++ {
		m := randomModel(r)
		if err := m.Validate(); err != nil {
			t.Fatalf("random model %+v invalid: %v", m, err)
		}
		q := int64(r.IntN(4000))
		if r.IntN(10) == 0 && len(m.Tiers) > 1 { // land exactly on a boundary
			q = *m.Tiers[r.IntN(len(m.Tiers)-1)].UpTo + int64(r.IntN(3)) - 1
		}
		rating := m.Rate(big.NewInt(q))
		want := bruteForce(m, q)
		if !rating.Amount.IsInt64() || rating.Amount.Int64() != want {
			t.Fatalf("%+v at %d: Rate = %s; brute force %d", m, q, rating.Amount, want)
		}
		checkLines(t, m, rating)
		limit := money.Amount(r.IntN(2_000_000))
		charged, lines := Cap(rating, limit)
		if charged != min(money.Amount(want), limit) {
			t.Fatalf("%+v at %d: Cap(%d) = %d; want %d", m, q, limit, charged, min(money.Amount(want), limit))
		}
		sum := new(big.Int)
		for _, l := range lines {
			sum.Add(sum, l.Amount)
		}
		if sum.Int64() != int64(charged) {
			t.Fatalf("%+v at %d: capped lines add up to %s, charged %d", m, q, sum, charged)
		}
	}
}

// checkLines asserts what every rating's lines promise: they add up to the
// amount, usage and included lines cover exactly the quantity, tiers are
// numbered from 1 within range, and a usage line prices its units at its
// unit amount (per package for package pricing).
func checkLines(t *testing.T, m Model, r Rating) {
	t.Helper()
	if len(r.Lines) == 0 {
		t.Fatalf("%+v: no lines", m)
	}
	sum, units := new(big.Int), new(big.Int)
	for _, l := range r.Lines {
		sum.Add(sum, l.Amount)
		if l.Description == "" || l.Quantity == nil {
			t.Fatalf("%+v: line %+v lacks a description or quantity", m, l)
		}
		if l.Kind == LineFlat {
			continue
		}
		units.Add(units, l.Quantity)
		if (m.Kind == Tiered) != (l.Tier >= 1 && l.Tier <= len(m.Tiers)) {
			t.Fatalf("%+v: line %+v has tier %d", m, l, l.Tier)
		}
		if l.UnitAmount == nil {
			t.Fatalf("%+v: line %+v has no unit amount", m, l)
		}
		priced := new(big.Int).Set(l.Quantity)
		if m.Kind == Package {
			size := big.NewInt(m.PackageSize)
			priced.Add(priced, size).Sub(priced, big.NewInt(1)).Quo(priced, size)
		}
		if priced.Mul(priced, big.NewInt(int64(*l.UnitAmount))).Cmp(l.Amount) != 0 && l.Kind == LineUsage {
			t.Fatalf("%+v: line %+v: quantity × unit amount ≠ amount", m, l)
		}
	}
	if sum.Cmp(r.Amount) != 0 {
		t.Fatalf("%+v: lines add up to %s, amount %s", m, sum, r.Amount)
	}
	if m.Kind != Flat && units.Cmp(r.Quantity) != 0 {
		t.Fatalf("%+v: lines cover %s units of %s", m, units, r.Quantity)
	}
}

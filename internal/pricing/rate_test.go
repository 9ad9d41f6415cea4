package pricing

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/wire"
)

func bigOf(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}

const e30 = "1000000000000000000000000000000"

var threeTiers = []Tier{{up(10000), 10}, {up(50000), 8}, {nil, 5}}

func TestRate(t *testing.T) {
	t.Parallel()
	graduated := Model{Kind: Tiered, Mode: Graduated, Tiers: threeTiers}
	volume := Model{Kind: Tiered, Mode: Volume, Tiers: threeTiers}
	perUnit := Model{Kind: PerUnit, UnitAmount: 5, IncludedUnits: 1000}
	plain := Model{Kind: PerUnit, UnitAmount: 7}
	pkg := Model{Kind: Package, UnitAmount: 500, PackageSize: 100}
	flat := Model{Kind: Flat, Amount: 9_000_000}
	tests := []struct {
		name  string
		m     Model
		q     string
		want  string
		descs []string
		tiers []int
	}{
		{"graduated zero", graduated, "0", "0", []string{"0 units × 10"}, []int{1}},
		{"graduated one", graduated, "1", "10", []string{"1 × 10"}, []int{1}},
		{"graduated end of tier 1", graduated, "10000", "100000", []string{"1–10,000 × 10"}, []int{1}},
		{"graduated first of tier 2", graduated, "10001", "100008", []string{"1–10,000 × 10", "10,001 × 8"}, []int{1, 2}},
		{"graduated end of tier 2", graduated, "50000", "420000", nil, []int{1, 2}},
		{"graduated first of tier 3", graduated, "50001", "420005", nil, []int{1, 2, 3}},
		{"graduated in tier 3", graduated, "60000", "470000", []string{"1–10,000 × 10", "10,001–50,000 × 8", "50,001–60,000 × 5"}, []int{1, 2, 3}},
		{"graduated 10^30", graduated, e30, "5000000000000000000000000170000", nil, []int{1, 2, 3}},
		{"volume zero", volume, "0", "0", []string{"0 units at tier 1 (1–10,000) × 10"}, []int{1}},
		{"volume end of tier 1", volume, "10000", "100000", nil, []int{1}},
		{"volume first of tier 2", volume, "10001", "80008", []string{"10,001 units at tier 2 (10,001–50,000) × 8"}, []int{2}},
		{"volume end of tier 2", volume, "50000", "400000", nil, []int{2}},
		{"volume first of tier 3", volume, "50001", "250005", []string{"50,001 units at tier 3 (50,001 and up) × 5"}, []int{3}},
		{"volume 10^30", volume, e30, "5" + e30[1:], nil, []int{3}},
		{"per_unit zero", perUnit, "0", "0", []string{"0 units × 5 beyond the included 1,000"}, []int{0}},
		{"per_unit within included", perUnit, "999", "0", []string{"999 units included (of 1,000)"}, []int{0}},
		{"per_unit all included", perUnit, "1000", "0", []string{"1,000 units included"}, []int{0}},
		{"per_unit one beyond", perUnit, "1001", "5", []string{"1,000 units included", "1 unit × 5 beyond the included 1,000"}, []int{0, 0}},
		{"per_unit 10^30", perUnit, e30, "4999999999999999999999999995000", nil, []int{0, 0}},
		{"per_unit no included", plain, "3", "21", []string{"3 units × 7"}, []int{0}},
		{"package zero", pkg, "0", "0", []string{"0 units in 0 packages of 100 × 500"}, []int{0}},
		{"package one", pkg, "1", "500", []string{"1 unit in 1 package of 100 × 500"}, []int{0}},
		{"package full", pkg, "100", "500", nil, []int{0}},
		{"package one over", pkg, "101", "1000", []string{"101 units in 2 packages of 100 × 500"}, []int{0}},
		{"package 10^30", pkg, e30, "5" + e30[1:], nil, []int{0}},
		{"package 10^30+1", pkg, e30[:len(e30)-1] + "1", "5000000000000000000000000000500", nil, []int{0}},
		{"flat zero", flat, "0", "9000000", []string{"flat fee for the period (0 units used)"}, []int{0}},
		{"flat 10^30", flat, e30, "9000000", nil, []int{0}},
	}
	for _, tt := range tests {
		r := tt.m.Rate(bigOf(tt.q))
		if r.Amount.String() != tt.want {
			t.Errorf("%s: Rate(%s) = %s; want %s", tt.name, tt.q, r.Amount, tt.want)
		}
		if r.Quantity.String() != tt.q {
			t.Errorf("%s: Quantity = %s", tt.name, r.Quantity)
		}
		var descs []string
		var tiers []int
		sum := new(big.Int)
		for _, l := range r.Lines {
			descs = append(descs, l.Description)
			tiers = append(tiers, l.Tier)
			sum.Add(sum, l.Amount)
		}
		if tt.descs != nil && !reflect.DeepEqual(descs, tt.descs) {
			t.Errorf("%s: descriptions %q; want %q", tt.name, descs, tt.descs)
		}
		if !reflect.DeepEqual(tiers, tt.tiers) {
			t.Errorf("%s: tiers %v; want %v", tt.name, tiers, tt.tiers)
		}
		if sum.Cmp(r.Amount) != 0 {
			t.Errorf("%s: lines add up to %s, amount %s", tt.name, sum, r.Amount)
		}
	}
}

func TestRateNilAndNegativeQuantityCountAsZero(t *testing.T) {
	t.Parallel()
	m := Model{Kind: PerUnit, UnitAmount: 5}
	for _, q := range []*big.Int{nil, big.NewInt(-40)} {
		r := m.Rate(q)
		if r.Quantity.Sign() != 0 || r.Amount.Sign() != 0 || len(r.Lines) != 1 {
			t.Errorf("Rate(%v) = %+v", q, r)
		}
	}
	if q := big.NewInt(12); m.Rate(q).Quantity == q {
		t.Error("Rating shares the caller's quantity")
	}
}

func TestBillable(t *testing.T) {
	t.Parallel()
	flat := Model{Kind: Flat, Amount: 9_000_000}
	included := Model{Kind: PerUnit, UnitAmount: 5, IncludedUnits: 10}
	tests := []struct {
		m    Model
		q    int64
		want bool
	}{
		{flat, 0, false}, // nothing is charged for zero usage
		{flat, 1, true},
		{included, 0, false},
		{included, 10, false}, // all usage free: nothing to charge
		{included, 11, true},
		{Model{Kind: Flat}, 3, false},
	}
	for _, tt := range tests {
		if got := tt.m.Rate(big.NewInt(tt.q)).Billable(); got != tt.want {
			t.Errorf("%+v at %d: Billable = %v; want %v", tt.m, tt.q, got, tt.want)
		}
	}
}

func TestCap(t *testing.T) {
	t.Parallel()
	m := Model{Kind: Tiered, Mode: Graduated, Tiers: threeTiers}
	tests := []struct {
		q       string
		cap     money.Amount
		charged money.Amount
		capped  bool
	}{
		{"60000", 1_000_000, 470_000, false},
		{"60000", 470_000, 470_000, false},
		{"60000", 469_999, 469_999, true},
		{"0", 1_000_000, 0, false},
		{e30, 1_000_000, 1_000_000, true},
		{"60000", -5, 0, true},
	}
	for _, tt := range tests {
		r := m.Rate(bigOf(tt.q))
		charged, lines := Cap(r, tt.cap)
		if charged != tt.charged {
			t.Errorf("Cap(%s, %d) = %d; want %d", tt.q, tt.cap, charged, tt.charged)
		}
		sum := new(big.Int)
		for _, l := range lines {
			sum.Add(sum, l.Amount)
		}
		if sum.Cmp(big.NewInt(int64(charged))) != 0 {
			t.Errorf("Cap(%s, %d): lines add up to %s", tt.q, tt.cap, sum)
		}
		wantLines := len(r.Lines)
		if tt.capped {
			wantLines++
		}
		last := lines[len(lines)-1]
		if got := last.Kind == LineCap; got != tt.capped || len(lines) != wantLines {
			t.Errorf("Cap(%s, %d): %d lines, last %+v; capped %v", tt.q, tt.cap, len(lines), last, tt.capped)
		}
	}
	r := m.Rate(big.NewInt(60000))
	_, lines := Cap(r, 400_000)
	want := wire.PaymentLine{Kind: "cap", Description: "capped at 400,000 per period (rated 470,000)", Amount: "-70000"}
	if got := lines[len(lines)-1].Wire(); !reflect.DeepEqual(got, want) {
		t.Errorf("cap line %+v; want %+v", got, want)
	}
	if len(r.Lines) != 3 {
		t.Errorf("Cap changed the rating's lines: %d", len(r.Lines))
	}
}

func TestLineWire(t *testing.T) {
	t.Parallel()
	m := Model{Kind: Tiered, Mode: Graduated, Tiers: threeTiers}
	got := WireLines(m.Rate(big.NewInt(10001)).Lines)
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	want := []wire.PaymentLine{
		{Kind: "usage", Description: "1–10,000 × 10", Quantity: s("10000"), Tier: i(1), UnitAmount: s("10"), Amount: "100000"},
		{Kind: "usage", Description: "10,001 × 8", Quantity: s("1"), Tier: i(2), UnitAmount: s("8"), Amount: "8"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WireLines = %+v; want %+v", got, want)
	}
	flat := Model{Kind: Flat, Amount: 3}.Rate(big.NewInt(2)).Lines[0].Wire()
	if flat.Tier != nil || flat.UnitAmount != nil || *flat.Quantity != "2" || flat.Amount != "3" || flat.Kind != "flat" {
		t.Errorf("flat line %+v", flat)
	}
	if WireLines(nil) == nil {
		t.Error("WireLines(nil) is nil; want []")
	}
}

func TestGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "-1234567": "-1,234,567", e30: "1,000,000,000,000,000,000,000,000,000,000"} {
		if got := group(bigOf(in)); got != want {
			t.Errorf("group(%s) = %s; want %s", in, got, want)
		}
	}
}

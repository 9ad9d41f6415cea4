package subscriptions

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Proration is exact to the base unit: (new − old) × remaining seconds ÷
// period seconds, rounded half up once, over fixed and calendar periods.
func TestProration(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	sub := func(amount money.Amount, interval string, anchor string) Subscription {
		a := at(anchor)
		x := Subscription{PlanID: "price_old", Amount: &amount, Interval: &interval, Anchor: &a}
		start, end := x.period(0)
		x.CurrentPeriodStart, x.CurrentPeriodEnd = &start, &end
		return x
	}
	for _, c := range []struct {
		name     string
		x        Subscription
		newPrice money.Amount
		now      string
		want     money.Amount
	}{
		// January: 31 days = 2,678,400 s; half of it left.
		{"mid-month upgrade", sub(10_000_000, "month", "2026-01-01T00:00:00Z"), 20_000_000, "2026-01-16T12:00:00Z", 5_000_000},
		// February 2026: 28 days = 2,419,200 s; 1 s left: 10 USDC × 1 ÷ 2,419,200 = 4.13… → 4.
		{"last second", sub(10_000_000, "month", "2026-02-01T00:00:00Z"), 20_000_000, "2026-02-28T23:59:59Z", 4},
		// Jan 31 anchor: the period is Jan 31 → Feb 28 (28 days); 7 days left of a downgrade.
		{"month end anchor, downgrade", sub(30_000_000, "month", "2026-01-31T00:00:00Z"), 16_000_000, "2026-02-21T00:00:00Z", -3_500_000},
		// A leap year: 2028 has 366 days = 31,622,400 s; 1 day left: 100 USDC × 86,400 ÷ 31,622,400 = 273,224.04… → 273,224.
		{"year, leap", sub(100_000_000, "year", "2028-01-01T00:00:00Z"), 200_000_000, "2028-12-31T00:00:00Z", 273_224},
		// 365 days; half a second is cut: remaining counts whole seconds.
		{"year, whole seconds", sub(1_000_000, "year", "2027-01-01T00:00:00Z"), 1_000_001, "2027-07-02T12:00:00.5Z", 0},
		// 3 USDC × 1 ÷ 2 rounds half up: 1.5 → 2 (charge) and −1.5 → −2 (credit).
		{"half up", sub(0, "week", "2026-03-02T00:00:00Z"), 3, "2026-03-05T12:00:00Z", 2},
		{"half up on the magnitude", sub(3, "week", "2026-03-02T00:00:00Z"), 0, "2026-03-05T12:00:00Z", -2},
		{"at the period's start", sub(10_000_000, "month", "2026-04-01T00:00:00Z"), 12_000_000, "2026-04-01T00:00:00Z", 2_000_000},
	} {
		pr, err := prorate(c.x, plans.Plan{ID: "price_new", Amount: c.newPrice}, AtNow, at(c.now))
		if err != nil || pr.amount != c.want {
			t.Errorf("%s: %d (%d of %d s), %v; want %d", c.name, pr.amount, pr.remaining, pr.period, err, c.want)
		}
	}
}

// The discount of the current period applies to the proration: percent
// rounded half up once on the prorated amount, an amount off at most the
// charge; a percent keeps a credit to the share paid, an amount off leaves
// it whole; a discount of another period, or none, leaves it as it is. The
// lines add up to the amount.
func TestProrationDiscount(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	month := "month"
	pct := func(p int64) *Discount { return &Discount{Coupon: wire.Coupon{ID: "coupon_1"}, PercentOff: &p} }
	amt := func(a money.Amount) *Discount { return &Discount{Coupon: wire.Coupon{ID: "coupon_1"}, AmountOff: &a} }
	from := func(d *Discount, first int) *Discount { d.FirstPeriod = first; return d }
	// January, half of it left: the difference of 10,000,001 prorates to
	// 5,000,000.5 → 5,000,001 (credit −5,000,001).
	for _, c := range []struct {
		name       string
		old, new   money.Amount
		d          *Discount
		want, adj  money.Amount
		discounted bool
	}{
		{"no discount", 10_000_000, 20_000_001, nil, 5_000_001, 0, false},
		{"25% of 5,000,001 is 1,250,000.25 → 1,250,000", 10_000_000, 20_000_001, pct(25), 3_750_001, -1_250_000, true},
		{"50% of 5,000,001 is 2,500,000.5 → 2,500,001", 10_000_000, 20_000_001, pct(50), 2_500_000, -2_500_001, true},
		{"100%: nothing to pay", 10_000_000, 20_000_001, pct(100), 0, -5_000_001, true},
		{"amount off", 10_000_000, 20_000_001, amt(3_000_000), 2_000_001, -3_000_000, true},
		{"amount off above the charge", 10_000_000, 20_000_001, amt(9_000_000), 0, -5_000_001, true},
		{"credit, 50%: half the credit", 20_000_001, 10_000_000, pct(50), -2_500_000, 2_500_001, true},
		{"credit, amount off: whole", 20_000_001, 10_000_000, amt(3_000_000), -5_000_001, 0, false},
		{"a discount from the next period", 10_000_000, 20_000_001, from(pct(25), 1), 5_000_001, 0, false},
	} {
		x := Subscription{PlanID: "price_old", Amount: &c.old, Interval: &month, Anchor: &anchor}
		start, end := x.period(0)
		x.CurrentPeriodStart, x.CurrentPeriodEnd = &start, &end
		if c.d != nil {
			x.DiscountJSON, _ = json.Marshal(c.d)
		}
		pr, err := prorate(x, plans.Plan{ID: "price_new", Amount: c.new}, AtNow, time.Date(2026, 1, 16, 12, 0, 0, 0, time.UTC))
		if err != nil || pr.amount != c.want || pr.adjust != c.adj {
			t.Errorf("%s: %d (adjust %d), %v; want %d (adjust %d)", c.name, pr.amount, pr.adjust, err, c.want, c.adj)
			continue
		}
		ls := pr.lines(x, plans.Plan{ID: "price_new", Amount: c.new})
		sum := money.Amount(0)
		for _, l := range ls {
			v, _ := money.Parse(strings.TrimPrefix(l.Amount, "-"))
			if strings.HasPrefix(l.Amount, "-") {
				v = -v
			}
			sum += v
		}
		if sum != c.want || (len(ls) == 2) != c.discounted || c.discounted && ls[1].Kind != LineDiscount {
			t.Errorf("%s: lines %+v add up to %d, want %d", c.name, ls, sum, c.want)
		}
	}
}

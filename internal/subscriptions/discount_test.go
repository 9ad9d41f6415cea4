package subscriptions

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Percent off rounds half up once, in exact integers, even where the
// product overflows 64 bits; an amount off never takes more than the charge.
func TestDiscountOff(t *testing.T) {
	pct := func(p int64) Discount { return Discount{PercentOff: &p} }
	amt := func(a money.Amount) Discount { return Discount{AmountOff: &a} }
	for _, c := range []struct {
		d      Discount
		amount money.Amount
		off    money.Amount
	}{
		{pct(25), 1000002, 250001}, // 250,000.5 → 250,001
		{pct(25), 1000001, 250000}, // 250,000.25 → 250,000
		{pct(33), 3, 1},            // 0.99 → 1
		{pct(1), 49, 0},            // 0.49 → 0
		{pct(1), 50, 1},            // 0.5 → 1
		{pct(100), 1234567, 1234567},
		{pct(50), money.Amount(9223372036854775807), 4611686018427387904},
		{pct(10), 0, 0},
		{amt(300000), 1000000, 300000},
		{amt(300000), 200000, 200000},
	} {
		if got := c.d.off(c.amount); got != c.off {
			t.Errorf("%+v of %d: %d off, want %d", c.d, c.amount, got, c.off)
		}
	}
}

// A discount covers the periods of its duration from its first, and its
// lines add up to the discounted amount.
func TestApplyDiscount(t *testing.T) {
	anchor := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	month, amount := "month", money.Amount(1000000)
	x := Subscription{ID: "sub_1", PlanID: "price_1", Anchor: &anchor, Interval: &month, Amount: &amount}
	two, pct := 2, int64(20)
	d := Discount{Coupon: wire.Coupon{ID: "coupon_1"}, PercentOff: &pct, FirstPeriod: 1, Periods: &two}
	b, _ := json.Marshal(d)
	x.DiscountJSON = b
	for n, want := range []money.Amount{1000000, 800000, 800000, 1000000} {
		got, lines, used, err := applyDiscount(x, n, amount, nil)
		if err != nil || got != want || used != (n == 2) {
			t.Fatalf("period %d: %d used %v %v, want %d", n, got, used, err, want)
		}
		var ls []wire.PaymentLine
		_ = json.Unmarshal(lines, &ls)
		sum := money.Amount(0)
		for _, l := range ls {
			v, _ := strconv.ParseInt(l.Amount, 10, 64)
			sum += money.Amount(v)
		}
		if len(ls) > 0 && sum != got {
			t.Fatalf("period %d: lines %s add up to %d, not %d", n, lines, sum, got)
		}
	}
	// End: the last covered period's end, calendar months kept.
	periods := int64(2)
	nd := NewDiscount(coupons.Coupon{ID: "coupon_1", Status: coupons.Active, PercentOff: &pct, Duration: coupons.Repeating,
		DurationInPeriods: &periods}, x, 1, anchor)
	if want := time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC); nd.End == nil || !nd.End.Equal(want) {
		t.Fatalf("end %v, want %s", nd.End, want)
	}
}

package subscriptions

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Discount is a subscription's discount as stored (its discount column):
// the coupon's terms as redeemed, so that archiving or exhausting the
// coupon later leaves discounts already applied alone. It covers the
// charges of periods FirstPeriod to FirstPeriod+Periods-1 (every period
// from FirstPeriod when Periods is nil: forever).
type Discount struct {
	Coupon      wire.Coupon   `json:"coupon"`
	PercentOff  *int64        `json:"percent_off,omitempty"`
	AmountOff   *money.Amount `json:"amount_off,omitempty"`
	Start       time.Time     `json:"start"`
	End         *time.Time    `json:"end,omitempty"`
	FirstPeriod int           `json:"first_period"`
	Periods     *int          `json:"periods,omitempty"`
}

// LineDiscount and LinePlan are the payment lines a discount adds: the
// amount taken off (negative), and on a licensed charge the plan's amount
// it is taken from, so the lines add up to the payment's amount.
const (
	LineDiscount = "discount"
	LinePlan     = "plan"
)

// NewDiscount is coupon c applied at now to x, whose first charge it
// covers is that of period first.
func NewDiscount(c coupons.Coupon, x Subscription, first int, now time.Time) Discount {
	d := Discount{Coupon: c.Wire(now), PercentOff: c.PercentOff, AmountOff: c.AmountOff, Start: now.Truncate(time.Microsecond), FirstPeriod: first}
	var n int
	switch c.Duration {
	case coupons.Once:
		n = 1
	case coupons.Repeating:
		n = int(*c.DurationInPeriods)
	default:
		return d
	}
	d.Periods = &n
	if x.Anchor != nil {
		_, end := x.period(first + n - 1)
		d.End = &end
	}
	return d
}

// Wire is the discount's public form.
func (d Discount) Wire() *wire.Discount {
	return &wire.Discount{Coupon: d.Coupon, Start: wire.Timestamp(d.Start), End: wire.OptTimestamp(d.End)}
}

// covers reports whether the discount reduces the charge of period n.
func (d Discount) covers(n int) bool {
	return n >= d.FirstPeriod && (d.Periods == nil || n < d.FirstPeriod+*d.Periods)
}

// last reports whether period n is the last the discount covers.
func (d Discount) last(n int) bool { return d.Periods != nil && n >= d.FirstPeriod+*d.Periods-1 }

// off is what the discount takes off amount: percent rounded half up once,
// in exact integer arithmetic, or the amount off; never more than amount.
func (d Discount) off(amount money.Amount) money.Amount {
	if amount <= 0 {
		return 0
	}
	if d.PercentOff != nil {
		n := new(big.Int).Mul(big.NewInt(int64(amount)), big.NewInt(*d.PercentOff))
		n.Add(n, big.NewInt(50))
		n.Quo(n, big.NewInt(100))
		return min(money.Amount(n.Int64()), amount)
	}
	if d.AmountOff != nil {
		return min(*d.AmountOff, amount)
	}
	return 0
}

// Describe says what the discount is, for its payment line and the
// customer portal: "20% off (coupon LAUNCH)".
func (d Discount) Describe() string {
	name := d.Coupon.ID
	if d.Coupon.Code != nil {
		name = *d.Coupon.Code
	}
	if d.PercentOff != nil {
		return strconv.FormatInt(*d.PercentOff, 10) + "% off (coupon " + name + ")"
	}
	return d.AmountOff.USDC() + " USDC off (coupon " + name + ")"
}

// StoredDiscount reads x's discount; nil when it has none.
func (x Subscription) StoredDiscount() (*Discount, error) {
	if len(x.DiscountJSON) == 0 {
		return nil, nil
	}
	var d Discount
	if err := json.Unmarshal(x.DiscountJSON, &d); err != nil {
		return nil, fmt.Errorf("subscription %s: stored discount: %w", x.ID, err)
	}
	return &d, nil
}

// applyDiscount reduces the charge of x's period n (amount, explained by
// lines; a licensed charge has none) by x's discount when it covers that
// period, adding its discount line (and, on a licensed charge, the plan's
// line). used is true when n is the last period the discount covers: it
// ends with this charge.
func applyDiscount(x Subscription, n int, amount money.Amount, lines json.RawMessage) (money.Amount, json.RawMessage, bool, error) {
	d, err := x.StoredDiscount()
	if err != nil || d == nil || !d.covers(n) {
		return amount, lines, false, err
	}
	off := d.off(amount)
	if off == 0 {
		return amount, lines, d.last(n), nil
	}
	var ls []wire.PaymentLine
	if len(lines) > 0 {
		if err := json.Unmarshal(lines, &ls); err != nil {
			return 0, nil, false, fmt.Errorf("subscription %s: lines: %w", x.ID, err)
		}
	} else {
		ls = append(ls, wire.PaymentLine{Kind: LinePlan, Description: "plan " + x.PlanID + ", one period", Amount: amount.String()})
	}
	ls = append(ls, wire.PaymentLine{Kind: LineDiscount, Description: d.Describe(), Amount: (-off).String()})
	b, err := json.Marshal(ls)
	return amount - off, b, d.last(n), err
}

// discount applies the subscription's discount to the charge of period n
// the action makes, and ends the discount with the last period it covers.
func (a *action) discount(n int, amount money.Amount, lines json.RawMessage) (money.Amount, json.RawMessage, error) {
	amount, lines, used, err := applyDiscount(a.after, n, amount, lines)
	if used {
		a.after.DiscountJSON = nil
	}
	return amount, lines, err
}

// marshalDiscount is d as the discount column stores it.
func marshalDiscount(d Discount) (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}

// FirstCharge is what a checkout of p with coupon c (nil for none) charges
// at once, outside a trial: a licensed plan's amount less the discount,
// nothing for a metered plan (it is charged at its period's end).
func FirstCharge(p plans.Plan, c *coupons.Coupon) money.Amount {
	if p.UsageType == plans.Metered {
		return 0
	}
	return Discounted(c, p.Amount)
}

// Discounted is amount less what coupon c (nil for none) takes off it.
func Discounted(c *coupons.Coupon, amount money.Amount) money.Amount {
	if c == nil {
		return amount
	}
	d := Discount{PercentOff: c.PercentOff, AmountOff: c.AmountOff}
	return amount - d.off(amount)
}

// startDiscount gives a new subscription x the discount of coupon c
// redeemed at checkout (none when c is nil), covering from its first
// period, and returns the lines of a licensed plan's first charge (nil
// without a discount, or in a trial: its first period is charged at its
// end). A discount used up by that charge (once) ends with it.
func (x *Subscription) startDiscount(c *coupons.Coupon, now time.Time) json.RawMessage {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(NewDiscount(*c, *x, 0, now))
	if err != nil {
		return nil // a struct of plain fields always marshals
	}
	x.DiscountJSON = b
	if x.Metered() || x.Status == Trialing {
		return nil
	}
	_, lines, used, err := applyDiscount(*x, 0, *x.Amount, nil)
	if used {
		x.DiscountJSON = nil
	}
	if err != nil {
		return nil
	}
	return lines
}

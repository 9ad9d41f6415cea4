package daemon_test

import (
	"encoding/json"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// prorated is (diff × remaining ÷ period) rounded half up, in big integers.
func prorated(diff, remaining, period int64) int64 {
	n := new(big.Int).Mul(big.NewInt(diff), big.NewInt(2*remaining))
	n.Add(n, big.NewInt(period))
	return n.Div(n, big.NewInt(2*period)).Int64()
}

// percentOff is pct% of amount rounded half up, as a discount takes it.
func percentOff(amount, pct int64) int64 { return (amount*pct + 50) / 100 }

// prorationLine is a proration payment or preview's lines: the proration
// (its amount and seconds left) and the discount's amount ("" for none).
func prorationLines(t *testing.T, raw json.RawMessage) (gross, remaining int64, discount string) {
	t.Helper()
	var ls []struct {
		Kind     string  `json:"kind"`
		Amount   string  `json:"amount"`
		Quantity *string `json:"quantity"`
	}
	if err := json.Unmarshal(raw, &ls); err != nil || len(ls) == 0 || len(ls) > 2 || ls[0].Kind != "proration" || ls[0].Quantity == nil {
		t.Fatalf("lines %s: %v", raw, err)
	}
	gross, remaining = mustInt(ls[0].Amount), mustInt(*ls[0].Quantity)
	if len(ls) == 2 {
		if ls[1].Kind != "discount" {
			t.Fatalf("lines %s", raw)
		}
		discount = ls[1].Amount
	}
	return gross, remaining, discount
}

// upgrade previews then makes an immediate change of x to plan, and
// returns the preview and the change's payment (nil when none was made).
func (f *moneyFixture) upgrade(x *client.Subscription, plan string) (*client.ChangePreview, *client.Payment) {
	f.t.Helper()
	pv, err := f.c.PreviewSubscriptionChange(f.ctx, x.ID, client.ChangeParams{Plan: plan, At: "now"})
	if err != nil {
		f.t.Fatal(err)
	}
	before := f.sub(x.ID)
	got, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: plan, At: "now"})
	if err != nil || got.PlanID != plan {
		f.t.Fatalf("change: %v %+v", err, got)
	}
	if got.LatestPaymentID == nil || before.LatestPaymentID != nil && *got.LatestPaymentID == *before.LatestPaymentID {
		return pv, nil
	}
	pay, err := f.c.GetPayment(f.ctx, *got.LatestPaymentID)
	if err != nil {
		f.t.Fatal(err)
	}
	return pv, pay
}

// A subscription's discount applies to an immediate upgrade's proration
// charge as to its period charges: 25% off forever takes 25% of the
// prorated difference (rounded half up once) with a discount line, the
// preview shows what is charged, and a downgrade's credit keeps the share
// the customer paid. The next charge of the preview is discounted too.
func TestPlanChangeNowWithPercentDiscount(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	f.coupon(client.CouponParams{PercentOff: 25, Duration: "forever", Code: "QUARTER"})
	res, err := f.c.Pay(f.ctx, pro.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1", Coupon: "quarter"})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Subscription
	period := int64(x.CurrentPeriodEnd.Sub(*x.CurrentPeriodStart) / time.Second)
	f.advance("10d3h7m")

	// Down to Basic: the credit is 75% of the prorated 10 USDC.
	pv, err := f.c.PreviewSubscriptionChange(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"})
	if err != nil {
		t.Fatal(err)
	}
	gross, remaining, discount := prorationLines(t, pv.Lines)
	off := percentOff(-gross, 25)
	if gross != -prorated(10_000_000, remaining, period) || discount != strconv.FormatInt(off, 10) ||
		pv.CreditGranted != strconv.FormatInt(-gross-off, 10) || pv.AmountDueNow != "0" || pv.NextCharge.Amount != "7500000" {
		t.Fatalf("downgrade preview (%d of %d s left): %s", remaining, period, pv.Raw)
	}
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 1})
	if err != nil || page.Data[0].Type != "subscription.updated" {
		t.Fatalf("%v %+v", err, page)
	}
	remaining = int64(x.CurrentPeriodEnd.Sub(page.Data[0].CreatedAt) / time.Second)
	credit := prorated(10_000_000, remaining, period)
	credit -= percentOff(credit, 25)
	if bal, err := f.c.GetCreditBalance(f.ctx, *x.CustomerID); err != nil || bal.Balance != strconv.FormatInt(credit, 10) {
		t.Fatalf("credit %+v %v, want %d", bal, err, credit)
	}

	// Back up to Pro: the charge is the proration less 25%.
	pv, pay := f.upgrade(x, pro.ID)
	if pay == nil {
		t.Fatal("the upgrade made no payment")
	}
	gross, remaining, discount = prorationLines(t, pay.Lines)
	off = percentOff(gross, 25)
	if gross != prorated(10_000_000, remaining, period) || discount != strconv.FormatInt(-off, 10) || pay.Amount != strconv.FormatInt(gross-off, 10) {
		t.Fatalf("upgrade payment (%d of %d s left): %s", remaining, period, pay.Raw)
	}
	pg, prem, pd := prorationLines(t, pv.Lines)
	if pv.AmountDueNow != strconv.FormatInt(pg+mustInt(pd), 10) || pv.CreditGranted != "0" || pv.NextCharge.Amount != "15000000" {
		t.Fatalf("upgrade preview: %s", pv.Raw)
	}
	// The preview and the charge are the same figures when the same seconds
	// were left (they are a moment apart on a running clock).
	if prem == remaining && (pv.AmountDueNow != pay.Amount || string(pv.Lines) != string(pay.Lines)) {
		t.Fatalf("preview %s\npayment %s", pv.Raw, pay.Raw)
	}
}

// An amount off applies to an upgrade's charge (at most the charge) while
// its repeating periods last, not to a downgrade's credit; a once coupon
// used by the first charge does not apply again; 100% off forever makes
// the upgrade charge nothing and no payment, and the plan still changes.
func TestPlanChangeNowDiscountDurations(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	f.coupon(client.CouponParams{AmountOff: "3000000", Duration: "repeating", DurationInPeriods: 2, Code: "THREE"})
	f.coupon(client.CouponParams{PercentOff: 50, Duration: "once", Code: "HALF"})
	f.coupon(client.CouponParams{PercentOff: 100, Duration: "forever", Code: "FREE"})
	subscribe := func(ext, code string) *client.Subscription {
		res, err := f.c.Pay(f.ctx, pro.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: ext, Coupon: code})
		if err != nil {
			t.Fatal(err)
		}
		return res.Subscription
	}
	three, half, free := subscribe("u_three", "THREE"), subscribe("u_half", "HALF"), subscribe("u_free", "FREE")
	if half.Discount != nil {
		t.Fatalf("the once coupon outlived its charge: %s", half.Raw)
	}
	f.advance("20d")
	for _, x := range []*client.Subscription{three, half, free} {
		if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
			t.Fatal(err)
		}
	}
	// The amount off leaves the credit whole: no discount line.
	if bal, err := f.c.GetCreditBalance(f.ctx, *three.CustomerID); err != nil || mustInt(bal.Balance) < 2_000_000 {
		t.Fatalf("credit %+v %v", bal, err)
	}

	// 3 USDC off a proration of about a third of 10 USDC.
	pv, pay := f.upgrade(three, pro.ID)
	gross, _, discount := prorationLines(t, pay.Lines)
	if gross < 3_000_000 || discount != "-3000000" || pay.Amount != strconv.FormatInt(gross-3_000_000, 10) {
		t.Fatalf("amount off: %s", pay.Raw)
	}
	if _, _, d := prorationLines(t, pv.Lines); d != "-3000000" {
		t.Fatalf("amount off preview: %s", pv.Raw)
	}
	// The once coupon was used by the checkout's charge: the upgrade is
	// charged in full, with one line.
	_, pay = f.upgrade(half, pro.ID)
	if gross, _, discount := prorationLines(t, pay.Lines); discount != "" || pay.Amount != strconv.FormatInt(gross, 10) {
		t.Fatalf("once coupon again: %s", pay.Raw)
	}
	// 100% off: nothing is charged, no payment, and the plan changes.
	pv, pay = f.upgrade(free, pro.ID)
	if pay != nil || pv.AmountDueNow != "0" || pv.NextCharge.Amount != "0" {
		t.Fatalf("100%% off: payment %+v, preview %s", pay, pv.Raw)
	}
	if _, _, d := prorationLines(t, pv.Lines); d == "" {
		t.Fatalf("100%% off preview has no discount line: %s", pv.Raw)
	}
	// After the repeating coupon's two periods the upgrade is charged in
	// full again.
	if _, err := f.c.ChangeSubscription(f.ctx, three.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	f.advance("31d")
	if got := f.sub(three.ID); got.Discount != nil {
		t.Fatalf("the repeating coupon outlived its periods: %s", got.Raw)
	}
	f.advance("5d")
	_, pay = f.upgrade(three, pro.ID)
	if gross, _, discount := prorationLines(t, pay.Lines); discount != "" || pay.Amount != strconv.FormatInt(gross, 10) {
		t.Fatalf("after the repeating periods: %s", pay.Raw)
	}
}

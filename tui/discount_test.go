package tui_test

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// A discount shows in the Subscriptions tab: the plan column leads with
// what it takes off, and the details carry the discount with its coupon.
func TestSubscriptionsShowDiscount(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	ctx := context.Background()
	pro, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateCoupon(ctx, client.CouponParams{PercentOff: 25, Duration: "forever", Code: "QUARTER"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Pay(ctx, pro.ID, client.CheckoutParams{Payer: magicWallet, ExternalCustomerID: "u_9", Coupon: "quarter"}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e.options())
	h.shows("● connected")
	h.keys("4")
	h.shows("[4 Subs]", "1 loaded · all", "−25% · price_")
	h.keys("enter", "ctrl+d") // the discount is below the first screen
	h.shows(`"discount": {`, `"code": "QUARTER"`, "details (esc to go back)")
}

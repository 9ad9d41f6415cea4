package tui_test

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// A change waiting for the period's end shows in the Subscriptions tab: the
// plan column leads with the plan the subscription moves to, and its
// details carry pending_plan_id.
func TestSubscriptionsShowPendingChange(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	ctx := context.Background()
	pro, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	basic, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Basic", Amount: "10000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.client.Pay(ctx, pro.ID, client.CheckoutParams{Payer: magicWallet, ExternalCustomerID: "u_7"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.ChangeSubscription(ctx, res.Subscription.ID, client.ChangeParams{Plan: basic.ID}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e.options())
	h.shows("● connected")
	h.keys("4")
	h.shows("[4 Subs]", "1 loaded · all", "→ price_")
	h.keys("enter")
	h.shows(`"pending_plan_id": "`+basic.ID+`"`, "details (esc to go back)")
}

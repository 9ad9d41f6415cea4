package cmd

import (
	"context"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// changePlan subscribes, makes a cheaper plan and moves the subscription to
// it at the period's end: subscription.updated, with pending_plan_id set.
func (t *trigger) changePlan(ctx context.Context) error {
	x, err := t.subscribe(ctx, rail.WalletSucceeds)
	if err != nil {
		return err
	}
	days := 1
	plan, err := t.c.CreatePlan(ctx, client.PlanParams{Name: "Trigger " + t.event + " (smaller)", Amount: "1000000", Interval: "custom",
		IntervalDays: &days, Description: "Made by tollgate trigger"})
	if err != nil {
		return err
	}
	t.keep("plan", plan.ID, plan.Product.Name+", "+usdc(plan.Amount)+" "+every(plan.Interval, plan.IntervalDays), plan.Raw)
	if x, err = t.c.ChangeSubscription(ctx, x.ID, client.ChangeParams{Plan: plan.ID}); err != nil {
		return err
	}
	t.keep("subscription", x.ID, x.Status+", moves to "+deref(x.PendingPlanID)+" at the period's end", x.Raw, x.CustomerID)
	return nil
}

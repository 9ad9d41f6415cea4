package tui_test

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// withData fills e's merchant with one of each thing the lists show: a
// subscription to a monthly plan bought at its checkout (and its first
// payment), a trialing subscription to a plan with a trial, an invoice paid
// at its checkout, and a meter.
func withData(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	plan, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Pay(ctx, plan.ID, client.CheckoutParams{Payer: magicWallet, ExternalCustomerID: "u_7"}); err != nil {
		t.Fatal(err)
	}
	days := 14
	trial, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Team", Amount: "30000000", Interval: "month", TrialDays: &days})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Pay(ctx, trial.ID, client.CheckoutParams{Payer: magicWallet, ExternalCustomerID: "u_8"}); err != nil {
		t.Fatal(err)
	}
	inv, err := e.client.CreateInvoice(ctx, client.InvoiceParams{Amount: "12500000", Description: "Workshop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Pay(ctx, inv.ID, client.CheckoutParams{Payer: magicWallet}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateMeter(ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls", Aggregation: client.AggregationCount, UnitLabel: "calls"}); err != nil {
		t.Fatal(err)
	}
}

// The Payments, Subscriptions and Meters tabs with data in them, the key
// help and the test clock after an advance, as 80×24 golden screens.
func TestViewsWithData(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	withData(t, e)
	h := newHarness(t, e.options())
	h.shows("● connected")

	h.keys("3")
	golden(t, "payments", h.shows("[3 Payments]", "2 loaded · all", "12.50 USDC", "20.00 USDC", "inv_", "sub_"))
	h.keys("4")
	golden(t, "subscriptions", h.shows("[4 Subs]", "2 loaded · all", "active", "trialing", "30.00 USDC", "20.00 USDC", "PERIOD END"))
	// The newest, the trial, in detail: its trial_end.
	h.keys("enter")
	h.shows("details (esc to go back)", `"status": "trialing"`)
	// trial_end sits below the first screen of the details: scroll down.
	h.keys("j", "j", "j", "j", "j", "j", "j", "j")
	h.shows(`"trial_end": "20`)
	h.keys("esc")
	h.keys("5")
	golden(t, "meters", h.shows("[5 Meters]", "1 loaded · all", "api_calls", "API calls", "count", "calls"))

	h.keys("1", "?")
	golden(t, "help", h.shows("[1 Events]", "Keys  (any key closes)", "Everywhere", "replay to handler"))
	h.keys("?")
	h.shows("Events  last 24 h")

	h.keys("8", "1d", "enter")
	golden(t, "clock", h.shows("[8 Clock]", "✓ advanced", "test clock now "))
}

package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// The money path's commands against a real daemon: plan create, checkout
// pay, invoice get|void, payments, subscriptions and the test clock.

// startPayAPI starts a daemon (rate limits off) on a fresh database with a
// test merchant.
func startPayAPI(t *testing.T, opts ...func(*daemon.Config)) *usageAPI {
	t.Helper()
	db, dbURL := eventsDB(t)
	d := startEventsDaemon(t, db, append([]func(*daemon.Config){func(c *daemon.Config) { c.RateLimits = false }}, opts...)...)
	_, key := merchantKey(t, db)
	return &usageAPI{url: d.URL, key: key, dbURL: dbURL, db: db, c: client.New(d.URL, key)}
}

// want fails unless r exited with code and every part is in its stdout (or,
// for a failure, its stderr).
func (r cliResult) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	text := r.stdout
	if code != ExitOK {
		text = r.stderr
	}
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Fatalf("output lacks %q\nstdout: %s\nstderr: %s", p, r.stdout, r.stderr)
		}
	}
	if code != ExitOK && r.stdout != "" {
		t.Fatalf("a failure printed on stdout: %s", r.stdout)
	}
}

// object decodes a --json run's stdout, which must be exactly one object.
func (r cliResult) object(t *testing.T) map[string]any {
	t.Helper()
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v): %s", err, r.stdout)
	}
	return m
}

func TestPlanCreate(t *testing.T) {
	t.Parallel()
	u := startPayAPI(t)
	ctx := context.Background()
	if _, err := u.c.CreateFeature(ctx, client.FeatureParams{Key: "api_access", Name: "API"}); err != nil {
		t.Fatal(err)
	}
	meter, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls"})
	if err != nil {
		t.Fatal(err)
	}

	u.cli(t, "", "plan", "create", "--name", "Pro", "--amount", "9usdc", "--interval", "month", "--description", "All of it",
		"--feature", "api_access").want(t, ExitOK,
		"Created plan price_", "Product:", "Pro", "All of it", "9.00 USDC (9000000 base units) every month", "Usage type:    licensed",
		"Features:      api_access", "Checkout URL:  "+u.url)

	m := u.cli(t, "", "plan", "create", "--name", "API usage", "--amount", "50usdc", "--interval", "custom", "--interval-days", "10",
		"--meter", meter.ID, "--tier-mode", "graduated", "--tier", "1000:0.002usdc", "--tier", "inf:0.001usdc", "--json").object(t)
	model, _ := json.Marshal(m["pricing_model"])
	if m["object"] != "plan" || m["usage_type"] != "metered" || m["meter"] != meter.ID || m["interval_days"] != 10.0 ||
		string(model) != `{"kind":"tiered","mode":"graduated","tiers":[{"unitAmount":"2000","upTo":1000},{"unitAmount":"1000","upTo":null}]}` {
		t.Fatalf("metered plan: %v", m)
	}

	u.cli(t, "", "plan", "create", "--name", "Per call", "--amount", "3usdc", "--interval", "week", "--meter", meter.ID,
		"--pricing-model", `{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`).want(t, ExitOK,
		"usage, capped at 3.00 USDC (3000000 base units) every week", "per_unit: 0.001 USDC per unit, first 100 included")

	// The API validates and its error names the field.
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--meter", meter.ID, "--tier-mode", "volume", "--tier", "inf:1", "--tier", "10:2"}, []string{"invalid_request", "pricing_model.tiers"}},
		{[]string{"--meter", meter.ID, "--pricing", "per_unit", "--unit-amount", "1", "--package-size", "3"}, []string{"pricing_model.packageSize"}},
		{[]string{"--meter", meter.ID, "--unit-amount", "1", "--included-units", "-5"}, []string{"pricing_model.includedUnits"}},
		{[]string{"--usage-type", "metered"}, []string{"meter"}},
		{[]string{"--interval-days", "5"}, []string{"invalid_interval"}},
		{[]string{"--feature", "nope"}, []string{"features[0].feature_key"}},
	} {
		args := append([]string{"plan", "create", "--name", "Bad", "--amount", "2usdc", "--interval", "month"}, tt.args...)
		u.cli(t, "", args...).want(t, ExitError, tt.want...)
	}
	u.cli(t, "", "plan", "create", "--name", "Cheap", "--amount", "0.5usdc", "--interval", "month", "--json").want(t, ExitError, "amount_too_small")
	u.cli(t, "", "plan", "create", "--name", "X", "--amount", "2usdc").want(t, ExitUsage, "interval")
	u.cli(t, "", "plan", "create", "--name", "Pro", "--amount", "2usdc", "--interval", "week", "--api-key", "sk_test_nope").want(t, ExitAuth, "unauthorized")
}

func TestCheckoutPayAndInvoices(t *testing.T) {
	t.Parallel()
	u := startPayAPI(t)
	ctx := context.Background()
	paid, err := u.c.CreateInvoice(ctx, client.InvoiceParams{Amount: "9000000", Description: "Order 1"})
	if err != nil {
		t.Fatal(err)
	}
	open, err := u.c.CreateInvoice(ctx, client.InvoiceParams{Amount: "2500000", Description: "Order 2"})
	if err != nil {
		t.Fatal(err)
	}
	u.cli(t, "", "invoice", "get", paid.ID).want(t, ExitOK, "Invoice "+paid.ID, "9.00 USDC (9000000 base units)", "Status:", "open", "Order 1")

	u.cli(t, "", "checkout", "pay", paid.ID, "--wallet", rail.WalletInsufficient).want(t, ExitError, "payment_failed", "insufficient_funds", "HTTP 402")
	u.cli(t, "", "checkout", "pay", paid.ID, "--wallet", "0x1111111111111111111111111111111111111111").want(t, ExitError, "invalid_request", "payer")
	u.cli(t, "", "checkout", "pay", paid.ID).want(t, ExitUsage, "wallet")
	pay := u.cli(t, "", "checkout", "pay", paid.ID, "--wallet", rail.WalletSucceeds, "--json").object(t)
	if pay["object"] != "payment" || pay["status"] != "succeeded" || pay["invoice_id"] != paid.ID || pay["amount"] != "9000000" {
		t.Fatalf("payment %v", pay)
	}
	payID := pay["id"].(string)
	// Paying again never charges twice: the same payment.
	u.cli(t, "", "checkout", "pay", paid.ID, "--wallet", rail.WalletSucceeds).want(t, ExitOK, "Paid "+paid.ID+": "+payID, "Status:", "succeeded")
	u.cli(t, "", "checkout", "pay", paid.ID, "--wallet", rail.WalletTransientOnce).want(t, ExitError, "invoice_not_open", "HTTP 409")

	u.cli(t, "", "invoice", "get", paid.ID).want(t, ExitOK, "paid", "Payment:", payID, "Paid:")
	if m := u.cli(t, "", "invoice", "get", paid.ID, "--json").object(t); m["status"] != "paid" || m["payment_id"] != payID {
		t.Fatalf("invoice %v", m)
	}
	u.cli(t, "", "invoice", "void", paid.ID).want(t, ExitError, "invoice_not_open")
	u.cli(t, "", "invoice", "void", open.ID).want(t, ExitOK, "Voided invoice "+open.ID, "void")
	if m := u.cli(t, "", "invoice", "get", open.ID, "--json").object(t); m["status"] != "void" {
		t.Fatalf("voided invoice %v", m)
	}
	u.cli(t, "", "checkout", "pay", open.ID, "--wallet", rail.WalletSucceeds).want(t, ExitError, "invoice_not_open")
	u.cli(t, "", "invoice", "get", "inv_nope").want(t, ExitError, "resource_not_found")
	u.cli(t, "", "invoice", "get").want(t, ExitUsage, "1 argument")

	u.cliWidth(t, 200, "", "payments", "list").want(t, ExitOK, "ID", "AMOUNT", payID, "9.00 USDC", "succeeded", paid.ID, rail.WalletSucceeds)
	u.cli(t, "", "payments", "list").want(t, ExitOK, "ID", "AMOUNT", payID, "9.00 USDC", "succeeded", paid.ID)
	list := u.cli(t, "", "payments", "list", "--json").object(t)
	if data := list["data"].([]any); list["object"] != "list" || len(data) != 1 || data[0].(map[string]any)["id"] != payID {
		t.Fatalf("payments list %v", list)
	}
	u.cli(t, "", "payments", "get", payID).want(t, ExitOK, "Payment "+payID, "Invoice:", paid.ID, "Transaction:  0x", "Network:", "test")
	u.cli(t, "", "payments", "get", "pay_nope").want(t, ExitError, "resource_not_found")
	u.cli(t, "", "payments", "list", "--limit", "101").want(t, ExitUsage, "--limit")
}

func TestSubscriptionsAndClock(t *testing.T) {
	t.Parallel()
	u := startPayAPI(t)
	ctx := context.Background()
	meter, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls"})
	if err != nil {
		t.Fatal(err)
	}
	days := 1
	metered, err := u.c.CreatePlan(ctx, client.PlanParams{Name: "Usage", Amount: "3000000", Interval: "custom", IntervalDays: &days,
		UsageType: "metered", Meter: meter.ID, PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`)})
	if err != nil {
		t.Fatal(err)
	}
	licensed, err := u.c.CreatePlan(ctx, client.PlanParams{Name: "Monthly", Amount: "2000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}

	sub := u.cli(t, "", "checkout", "pay", metered.ID, "--wallet", rail.WalletSucceeds, "--external-customer-id", "u_1", "--json").object(t)
	if sub["object"] != "subscription" || sub["status"] != "active" || sub["latest_payment_id"] != nil {
		t.Fatalf("metered subscription %v", sub)
	}
	subID, customer := sub["id"].(string), sub["customer_id"].(string)
	u.cli(t, "", "checkout", "pay", licensed.ID, "--wallet", rail.WalletSucceeds, "--external-customer-id", "u_2").want(t, ExitOK,
		"Subscribed: sub_", "Status:", "active", "2.00 USDC (2000000 base units)", "Billed:", "every month", "Latest payment:  pay_")
	u.cli(t, "", "checkout", "pay", licensed.ID, "--wallet", rail.WalletSucceeds, "--external-customer-id", "u_2").want(t, ExitError, "already_subscribed")

	for _, v := range []string{"600", "500"} {
		if _, err := u.c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_1", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	u.cli(t, "", "subscriptions", "upcoming", subID).want(t, ExitOK, "Upcoming charge of "+subID, "1.00 USDC (1000000 base units)",
		"Lines:", "KIND", "included", "usage", "1,000", "0.001 USDC")
	if up := u.cli(t, "", "subscriptions", "upcoming", subID, "--json").object(t); up["object"] != "upcoming_charge" || up["amount"] != "1000000" {
		t.Fatalf("upcoming %v", up)
	}

	// The clock: errors first, then the metered period ends and is charged.
	u.cli(t, "", "clock", "advance").want(t, ExitUsage, "by", "to")
	u.cli(t, "", "clock", "advance", "--by", "1d", "--to", "2030-01-01").want(t, ExitUsage, "by", "to")
	u.cli(t, "", "clock", "advance", "--to", "yesterday").want(t, ExitUsage, "--to")
	u.cli(t, "", "clock", "advance", "--by", "soon").want(t, ExitError, "invalid_request", "by")
	u.cli(t, "", "clock", "advance", "--to", "2001-01-01").want(t, ExitError, "invalid_request")
	u.cli(t, "", "clock", "show").want(t, ExitOK, "Test clock: ", "UTC (real time)")
	before := u.cli(t, "", "clock", "show", "--json").object(t)
	u.cli(t, "", "clock", "advance", "--by", "1d2h").want(t, ExitOK, "Test clock advanced to ", "1d2h ahead of real time")
	after := u.cli(t, "", "clock", "show", "--json").object(t)
	t0, _ := time.Parse(time.RFC3339, before["now"].(string))
	t1, _ := time.Parse(time.RFC3339, after["now"].(string))
	t2 := t1.Add(time.Hour).Truncate(time.Second)
	moved := u.cli(t, "", "clock", "advance", "--to", t2.Format(time.RFC3339), "--json").object(t)
	if now, err := time.Parse(time.RFC3339, moved["now"].(string)); moved["object"] != "test_clock" || err != nil || !now.Equal(t2) {
		t.Fatalf("advance --to %s: %v", t2, moved)
	}
	if after["object"] != "test_clock" || t1.Sub(t0) < 26*time.Hour || t1.Sub(t0) > 27*time.Hour {
		t.Fatalf("clock %v → %v", before, after)
	}

	x, err := u.c.GetSubscription(ctx, subID)
	if err != nil || x.LatestPaymentID == nil {
		t.Fatalf("the metered period was not charged: %v %v", x, err)
	}
	payID := *x.LatestPaymentID
	u.cli(t, "", "payments", "get", payID).want(t, ExitOK, "Payment "+payID, "Subscription:", subID, "Period:", "Lines:",
		"included", "usage", "1,000", "1.00 USDC")
	u.cli(t, "", "payments", "list", "--all", "--limit", "1").want(t, ExitOK, payID, subID)
	if p := u.cli(t, "", "payments", "get", payID, "--json").object(t); p["subscription_id"] != subID || len(p["lines"].([]any)) == 0 {
		t.Fatalf("payment %v", p)
	}

	u.cliWidth(t, 200, "", "subscriptions", "list").want(t, ExitOK, "STATUS", "PLAN", subID, metered.ID, "every day", licensed.ID, "every month")
	u.cli(t, "", "subscriptions", "list").want(t, ExitOK, "STATUS", subID, "every day", "every month")
	mine := u.cli(t, "", "subscriptions", "list", "--customer", customer, "--json").object(t)
	if data := mine["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != subID {
		t.Fatalf("--customer %s: %v", customer, mine)
	}
	u.cli(t, "", "subscriptions", "get", subID).want(t, ExitOK, "Subscription "+subID, "usage, capped at 3.00 USDC", "Current period:", "Latest payment:  "+payID)
	if x := u.cli(t, "", "subscriptions", "get", subID, "--json").object(t); x["object"] != "subscription" || x["latest_payment_id"] != payID {
		t.Fatalf("subscription %v", x)
	}
	u.cli(t, "", "subscriptions", "get", "sub_nope").want(t, ExitError, "resource_not_found")

	u.cli(t, "", "subscriptions", "cancel", subID).want(t, ExitOK, "Canceled subscription "+subID+": it ends ", "Cancels at:")
	ended := u.cli(t, "", "subscriptions", "cancel", subID, "--now", "--json").object(t)
	if ended["status"] != "expired" || ended["ended_at"] == nil {
		t.Fatalf("cancel --now: %v", ended)
	}
	u.cli(t, "", "subscriptions", "cancel", subID).want(t, ExitError, "invalid_request")
	u.cli(t, "", "subscriptions", "upcoming", subID).want(t, ExitError, "no charge is coming")
}

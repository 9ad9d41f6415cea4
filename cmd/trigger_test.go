package cmd

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// `tollgate trigger` against a real daemon: every event it supports really
// fires and is in the feed.

// triggerOutcome is what one trigger must make: the kinds of objects, in
// order, and the status the subscription (if any) ends in.
var triggerOutcome = map[string]struct {
	kinds  []string
	status string
}{
	"invoice.paid":                   {[]string{"invoice", "payment"}, ""},
	"subscription.active":            {[]string{"plan", "subscription"}, "active"},
	"subscription.renewed":           {[]string{"plan", "subscription", "test_clock"}, "active"},
	"subscription.payment_failed":    {[]string{"plan", "subscription", "test_clock"}, "past_due"},
	"subscription.dunning_exhausted": {[]string{"plan", "subscription", "test_clock"}, "canceled"},
	"subscription.revoked":           {[]string{"plan", "subscription", "test_clock"}, "revoked"},
	"subscription.expired":           {[]string{"plan", "subscription"}, "expired"},
	"subscription.updated":           {[]string{"plan", "subscription", "plan"}, "active"},
	"subscription.trial_will_end":    {[]string{"plan", "subscription", "test_clock"}, "trialing"},
	"credit.granted":                 {[]string{"credit_grant"}, ""},
	"credit.debited":                 {[]string{"credit_grant", "credit_debit"}, ""},
	"entitlement.granted":            {[]string{"feature", "entitlement_grant"}, ""},
	"meter_event.cancelled":          {[]string{"meter", "meter_event"}, ""},
	"alert.triggered":                {[]string{"meter", "alert", "meter_event"}, ""},
}

func TestTriggerEveryEvent(t *testing.T) {
	t.Parallel()
	db, _ := eventsDB(t)
	// One retry, so that a magic wallet can exhaust dunning.
	d := startEventsDaemon(t, db, func(c *daemon.Config) {
		c.RateLimits = false
		c.DunningSchedule = []time.Duration{24 * time.Hour}
	})
	if len(triggerOutcome) != len(triggerEvents) {
		t.Fatalf("%d outcomes for %d events", len(triggerOutcome), len(triggerEvents))
	}
	for _, e := range triggerEventNames() {
		t.Run(e, func(t *testing.T) {
			t.Parallel()
			// A merchant each: triggers move their merchant's test clock.
			_, key := merchantKey(t, db)
			u := &usageAPI{url: d.URL, key: key, db: db, c: client.New(d.URL, key)}
			out := u.cli(t, "", "trigger", e, "--json").object(t)
			want := triggerOutcome[e]
			if out["object"] != "trigger" || out["event"] != e {
				t.Fatalf("trigger %v", out)
			}
			var kinds []string
			for _, o := range out["objects"].([]any) {
				obj := o.(map[string]any)
				kinds = append(kinds, obj["object"].(string))
				if obj["object"] == "subscription" && obj["status"] != want.status {
					t.Errorf("subscription ended %v, want %s: %v", obj["status"], want.status, obj)
				}
			}
			if !slices.Equal(kinds, want.kinds) {
				t.Errorf("made %v, want %v", kinds, want.kinds)
			}
			// Every event printed is in the feed with its type, the wanted
			// one among them.
			feed := map[string]string{}
			for ev, err := range client.All(context.Background(), u.c.ListEvents, client.ListParams{Limit: 100}) {
				if err != nil {
					t.Fatal(err)
				}
				feed[ev.ID] = ev.Type
			}
			seen := false
			for _, ev := range out["events"].([]any) {
				ev := ev.(map[string]any)
				id, typ := ev["id"].(string), ev["type"].(string)
				if feed[id] != typ {
					t.Errorf("printed %s %s, feed has %q", id, typ, feed[id])
				}
				seen = seen || typ == e
			}
			if !seen {
				t.Errorf("no %s among the events printed: %v", e, out["events"])
			}
		})
	}
}

func TestTriggerOutputAndRefusals(t *testing.T) {
	t.Parallel()
	db, _ := eventsDB(t)
	d := startEventsDaemon(t, db, func(c *daemon.Config) { c.RateLimits = false }) // the default dunning: three retries
	ctx := context.Background()
	m, key := merchantKey(t, db)
	u := &usageAPI{url: d.URL, key: key, db: db, c: client.New(d.URL, key)}

	r := u.cli(t, "", "trigger", "invoice.paid")
	r.want(t, ExitOK, "Triggered invoice.paid\n", "  invoice  inv_", "paid, 5.00 USDC", "  payment  pay_", "succeeded, 5.00 USDC from 0x4242",
		"Events\n", "  evt_", "invoice.paid")
	if r.stderr != "" {
		t.Fatalf("stderr: %s", r.stderr)
	}

	u.cli(t, "", "trigger", "invoice.refunded").want(t, ExitUsage, `cannot trigger "invoice.refunded"`, "subscription.dunning_exhausted")
	u.cli(t, "", "trigger").want(t, ExitUsage, "1 argument")

	// A live key is refused before anything is made.
	_, live, err := auth.CreateKey(ctx, db, m, tenant.Live)
	if err != nil {
		t.Fatal(err)
	}
	u.cli(t, "", "trigger", "invoice.paid", "--api-key", live).want(t, ExitUsage, "test mode only", "live key")
	invs, err := client.New(d.URL, live).ListInvoices(ctx, client.ListParams{})
	if err != nil || len(invs.Data) != 0 {
		t.Fatalf("live invoices after a refused trigger: %v %v", invs, err)
	}

	// The default schedule (three retries over five days) runs out too:
	// the wallet fails every charge after its first.
	start, err := u.c.GetTestClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u.cli(t, "", "trigger", "subscription.dunning_exhausted").want(t, ExitOK, "subscription.dunning_exhausted")
	end, err := u.c.GetTestClock(ctx)
	if err != nil || end.Now.Sub(start.Now) > 10*24*time.Hour {
		t.Fatalf("the clock moved from %v to %v (%v)", start.Now, end.Now, err)
	}
}

// A dunning schedule longer than trigger's patience: it gives up after 200
// days of clock time with a clear error.
func TestTriggerDunningGivesUp(t *testing.T) {
	t.Parallel()
	db, _ := eventsDB(t)
	d := startEventsDaemon(t, db, func(c *daemon.Config) {
		c.RateLimits = false
		c.DunningSchedule = []time.Duration{24 * time.Hour, 300 * 24 * time.Hour}
	})
	_, key := merchantKey(t, db)
	u := &usageAPI{url: d.URL, key: key, db: db, c: client.New(d.URL, key)}
	start, err := u.c.GetTestClock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := u.cli(t, "", "trigger", "subscription.dunning_exhausted", "--json")
	r.want(t, ExitError, "still past_due after 200 days", "gave up waiting for subscription.dunning_exhausted")
	end, err := u.c.GetTestClock(context.Background())
	if moved := end.Now.Sub(start.Now); err != nil || moved < 200*24*time.Hour || moved > 202*24*time.Hour {
		t.Fatalf("the clock moved %v (%v)", moved, err)
	}
}

// The shell completes trigger's events, --wallet's magic wallets and plan
// create's fixed values from the command tree.
func TestPaymentsCompletion(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"trigger", "subscription.r"}, []string{"subscription.renewed\n", "subscription.revoked\n"}},
		{[]string{"checkout", "pay", "inv_1", "--wallet", ""}, []string{"0x4242424242424242424242424242424242424242\tevery payment and charge succeeds"}},
		{[]string{"plan", "create", "--interval", ""}, []string{"week\n", "biweekly\n", "custom\n"}},
		{[]string{"plan", "create", "--pricing", ""}, []string{"per_unit\n", "tiered\n"}},
		{[]string{"subscriptions", ""}, []string{"list\t", "get\t", "cancel\t", "upcoming\t"}},
		{[]string{"clock", ""}, []string{"show\t", "advance\t"}},
	} {
		res := cliRun(t, nil, append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("%v: completions %q lack %q", tt.args, res.stdout, w)
			}
		}
	}
}

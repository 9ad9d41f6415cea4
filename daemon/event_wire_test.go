package daemon_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Every event's data is the REST object of the same change: the operation
// encodes both with the one wire form. For each
// event type emitted today, the change is made through the API and the
// event's data compared with the response.
func TestEventDataIsTheRESTObject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.key(b.merchant("acme"), tenant.Test)
	post := func(path, body string) map[string]any {
		t.Helper()
		status, _, out := b.raw("POST", path, key, body)
		if status/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, status, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	post("/v1/meters", `{"key":"calls","display_name":"Calls","aggregation":"count"}`)
	want := map[string]map[string]any{
		events.CreditGranted: post("/v1/credit_grants", `{"amount":5000000,"external_customer_id":"u1","expires_at":"2099-01-01T00:00:00Z"}`),
		events.CreditDebited: post("/v1/credit_debits", `{"amount":7000000,"external_customer_id":"u1"}`),
		events.EntitlementGranted: func() map[string]any {
			post("/v1/features", `{"key":"api","name":"API","type":"boolean"}`)
			return post("/v1/entitlement_grants", `{"feature_key":"api","external_customer_id":"u1","active_until":"2099-01-01T00:00:00.5Z"}`)
		}(),
	}
	status, _, out := b.raw("GET", "/v1/events?limit=100", key, "")
	if status != 200 {
		t.Fatalf("events: %d %s", status, out)
	}
	var list struct {
		Data []struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range list.Data {
		w, ok := want[ev.Type]
		if !ok {
			t.Errorf("unexpected event type %s", ev.Type)
			continue
		}
		seen[ev.Type] = true
		if !reflect.DeepEqual(ev.Data, w) {
			t.Errorf("%s: event data\n%v\nREST object\n%v", ev.Type, ev.Data, w)
		}
	}
	for typ := range want {
		if !seen[typ] {
			t.Errorf("no %s event", typ)
		}
	}
}

// The money path's events carry the REST object of the change too: each
// event's data equals what the API answers for that object right after.
func TestMoneyEventDataIsTheRESTObject(t *testing.T) {
	t.Parallel()
	f := setupMoney(t, func(c *daemon.Config) { c.DunningSchedule = []time.Duration{24 * time.Hour} })
	get := func(path string) map[string]any {
		t.Helper()
		status, _, out := f.raw("GET", path, f.key, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// latest returns the data of the newest event of type typ about id.
	latest := func(typ, id string) map[string]any {
		t.Helper()
		status, _, out := f.raw("GET", "/v1/events?limit=100", f.key, "")
		if status != 200 {
			t.Fatal(out)
		}
		var list struct {
			Data []struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Data {
			if e.Type == typ && e.Data["id"] == id {
				return e.Data
			}
		}
		t.Fatalf("no %s event about %s", typ, id)
		return nil
	}
	same := func(typ string, event, rest map[string]any) {
		t.Helper()
		if !reflect.DeepEqual(event, rest) {
			t.Errorf("%s: event data\n%v\nREST object\n%v", typ, event, rest)
		}
	}
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "4000000", Description: "Once"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds}); err != nil {
		t.Fatal(err)
	}
	same(events.InvoicePaid, latest(events.InvoicePaid, inv.ID), get("/v1/invoices/"+inv.ID))

	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	renews := f.subscribe(p.ID, rail.WalletSucceeds, "u_renews")
	same(events.SubscriptionActive, latest(events.SubscriptionActive, renews.ID), get("/v1/subscriptions/"+renews.ID))
	fails := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_fails")
	revokes := f.subscribe(p.ID, rail.WalletRevokesAfter1st, "u_revokes")
	ends := f.subscribe(p.ID, rail.WalletSucceeds, "u_ends")
	f.advance("7d1h")
	same(events.SubscriptionRenewed, latest(events.SubscriptionRenewed, renews.ID), get("/v1/subscriptions/"+renews.ID))
	same(events.SubscriptionPaymentFailed, latest(events.SubscriptionPaymentFailed, fails.ID), get("/v1/subscriptions/"+fails.ID))
	same(events.SubscriptionRevoked, latest(events.SubscriptionRevoked, revokes.ID), get("/v1/subscriptions/"+revokes.ID))
	f.advance("1d")
	same(events.SubscriptionDunningExhausted, latest(events.SubscriptionDunningExhausted, fails.ID), get("/v1/subscriptions/"+fails.ID))
	now := false
	if _, err := f.c.CancelSubscription(f.ctx, ends.ID, client.CancelParams{AtPeriodEnd: &now}); err != nil {
		t.Fatal(err)
	}
	same(events.SubscriptionExpired, latest(events.SubscriptionExpired, ends.ID), get("/v1/subscriptions/"+ends.ID))

	pay, err := f.c.GetInvoice(f.ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := payments.IssueRefund(f.ctx, f.db, func(tenant.Mode) (rail.Rail, bool) { return rail.NewTest(f.db), true },
		payments.RefundInput{PaymentID: *pay.PaymentID}, func(tenant.Scope) time.Time { return time.Now() })
	if err != nil {
		t.Fatal(err)
	}
	var refund map[string]any
	b, _ := json.Marshal(r.Wire())
	_ = json.Unmarshal(b, &refund)
	same(events.RefundSucceeded, latest(events.RefundSucceeded, r.ID), refund)
}

package daemon_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// POST /v1/plans refuses every bad field with its error code, naming it.
func TestPlanValidation(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	meter, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.CreateFeature(f.ctx, client.FeatureParams{Key: "sso", Name: "SSO"}); err != nil {
		t.Fatal(err)
	}
	ok := `"name":"Pro","amount":1000000,"interval":"month"`
	for _, tc := range []struct{ body, code, field string }{
		{`{"name":"Pro","amount":999999,"interval":"month"}`, "amount_too_small", "amount"},
		{`{"name":"Pro","amount":"1000000.5","interval":"month"}`, "invalid_request", "amount"},
		{`{"name":"Pro","amount":1000000,"interval":"fortnight"}`, "invalid_interval", "interval"},
		{`{"name":"Pro","amount":1000000,"interval":"custom"}`, "invalid_interval", "interval_days"},
		{`{"name":"Pro","amount":1000000,"interval":"custom","interval_days":366}`, "invalid_interval", "interval_days"},
		{`{"name":"Pro","amount":1000000,"interval":"custom","interval_days":0}`, "invalid_interval", "interval_days"},
		{`{"name":"Pro","amount":1000000,"interval":"month","interval_days":30}`, "invalid_interval", "interval_days"},
		{`{"name":"P","amount":1000000,"interval":"month"}`, "invalid_request", "name"},
		{`{` + ok + `,"description":"` + strings.Repeat("é", 301) + `"}`, "invalid_request", "description"},
		{`{` + ok + `,"colour":"red"}`, "invalid_request", "colour"},
		{`{` + ok + `,"usage_type":"metered"}`, "invalid_request", "meter"},
		{`{` + ok + `,"usage_type":"metered","meter":"` + meter.ID + `"}`, "invalid_request", "pricing_model"},
		{`{` + ok + `,"usage_type":"metered","meter":"meter_nope","pricing_model":{"kind":"flat","amount":5}}`, "invalid_request", "meter"},
		{`{` + ok + `,"usage_type":"metered","meter":"` + meter.ID + `","pricing_model":{"kind":"per_unit","unit_amount":5}}`, "invalid_request", "pricing_model"},
		{`{` + ok + `,"usage_type":"metered","meter":"` + meter.ID + `","pricing_model":{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10,"unitAmount":5}]}}`, "invalid_request", "pricing_model"},
		{`{` + ok + `,"pricing_model":{"kind":"flat","amount":5}}`, "invalid_request", "pricing_model"},
		{`{` + ok + `,"features":["nope"]}`, "invalid_request", "features[0]"},
		{`{` + ok + `,"features":[{"feature_key":"sso","limit_value":3}]}`, "invalid_request", "features[0].limit_value"},
	} {
		status, _, out := f.raw("POST", "/v1/plans", f.key, tc.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal([]byte(out), &e)
		if status != 400 || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.field) {
			t.Errorf("%s: %d %s, want 400 %s naming %s", tc.body, status, out, tc.code, tc.field)
		}
	}
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "2000000", Interval: "custom", IntervalDays: ptrInt(10), UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"package","unitAmount":"250","packageSize":100}`), Features: []client.PlanFeature{{FeatureKey: "sso"}}})
	if !strings.HasPrefix(p.ID, "price_") || !strings.HasPrefix(p.Product.ID, "prod_") || p.CheckoutURL != f.url+"/checkout/"+p.ID ||
		p.UsageType != "metered" || p.Meter == nil || len(p.Features) != 1 || len(p.PricingModel) == 0 {
		t.Fatalf("plan %s", p.Raw)
	}
	if status, _, _ := f.raw("GET", "/v1/plans", f.key, ""); status != 404 {
		t.Errorf("GET /v1/plans: %d, want 404 (plans are create-only)", status)
	}
}

// A plan's features follow the subscription: active, grace while past due,
// revoked after revocation, expired after it expires.
func TestPlanEntitlementsFollowSubscription(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	if _, err := f.c.CreateFeature(f.ctx, client.FeatureParams{Key: "sso", Name: "SSO"}); err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Team", Amount: "2000000", Interval: "week", Features: []client.PlanFeature{{FeatureKey: "sso"}}})
	late := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_late")
	gone := f.subscribe(p.ID, rail.WalletRevokesAfter1st, "u_gone")
	ends := f.subscribe(p.ID, rail.WalletSucceeds, "u_ends")
	reason := func(x *client.Subscription) (bool, string) {
		t.Helper()
		e, err := f.c.CheckEntitlement(f.ctx, *x.CustomerID, "sso")
		if err != nil {
			t.Fatal(err)
		}
		return e.Entitled, e.Reason
	}
	for _, x := range []*client.Subscription{late, gone, ends} {
		if ok, r := reason(x); !ok || r != "active" {
			t.Fatalf("after checkout: %v %s", ok, r)
		}
	}
	now := false
	if _, err := f.c.CancelSubscription(f.ctx, ends.ID, client.CancelParams{AtPeriodEnd: &now}); err != nil {
		t.Fatal(err)
	}
	f.advance("7d1h")
	for _, tc := range []struct {
		x        *client.Subscription
		entitled bool
		reason   string
	}{{late, true, "grace"}, {gone, false, "revoked"}, {ends, false, "expired"}} {
		if ok, r := reason(tc.x); ok != tc.entitled || r != tc.reason {
			t.Errorf("%s: %v %s, want %v %s", tc.x.ID, ok, r, tc.entitled, tc.reason)
		}
	}
	f.advance("3d") // the second retry succeeds
	if ok, r := reason(late); !ok || r != "active" {
		t.Errorf("after recovery: %v %s", ok, r)
	}
}

package daemon_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// planPair makes features pro and basic and two monthly plans granting
// them: Pro at 20 USDC and Basic at 10.
func (f *moneyFixture) planPair() (pro, basic *client.Plan) {
	f.t.Helper()
	for _, k := range []string{"pro_reports", "basic_reports"} {
		if _, err := f.c.CreateFeature(f.ctx, client.FeatureParams{Key: k, Name: k}); err != nil {
			f.t.Fatal(err)
		}
	}
	pro = f.plan(client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month", Features: []client.PlanFeature{{FeatureKey: "pro_reports"}}})
	basic = f.plan(client.PlanParams{Name: "Basic", Amount: "10000000", Interval: "month", Features: []client.PlanFeature{{FeatureKey: "basic_reports"}}})
	return pro, basic
}

func (f *moneyFixture) entitled(customerID, feature string) bool {
	f.t.Helper()
	e, err := f.c.CheckEntitlement(f.ctx, customerID, feature)
	if err != nil {
		f.t.Fatal(err)
	}
	return e.Entitled
}

// A downgrade at the period's end waits as pending_plan_id, changing back
// clears it, and the renewal starts the next period on the new plan: its
// amount charged, its features granted and the old plan's revoked. Each
// step emits subscription.updated.
func TestPlanChangeAtPeriodEnd(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")

	pv, err := f.c.PreviewSubscriptionChange(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Object != "subscription_change_preview" || pv.At != "period_end" || !pv.EffectiveAt.Equal(*x.CurrentPeriodEnd) ||
		pv.AmountDueNow != "0" || pv.CreditGranted != "0" || pv.NextCharge.Amount != "10000000" || string(pv.Lines) != "[]" {
		t.Fatalf("preview: %s", pv.Raw)
	}
	if got := f.sub(x.ID); got.PendingPlanID != nil || !strings.Contains(string(got.Raw), `"pending_plan_id":null`) {
		t.Fatalf("the preview changed something: %s", got.Raw)
	}

	got, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.PlanID != pro.ID || got.PendingPlanID == nil || *got.PendingPlanID != basic.ID || !got.PendingChangeAt.Equal(*x.CurrentPeriodEnd) {
		t.Fatalf("after the change: %s", got.Raw)
	}
	// Back to the current plan: the pending change is dropped.
	if got, err = f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID}); err != nil || got.PendingPlanID != nil {
		t.Fatalf("back to pro: %v %s", err, got.Raw)
	}
	// Again, and the same request twice changes nothing more.
	for range 2 {
		if _, err = f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "period_end"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(f.eventTypes(), "subscription.updated"); n != 4 {
		t.Fatalf("%d subscription.updated, want 4 (set, clear, set, set again): %v", n, f.eventTypes())
	}
	if !f.entitled(*x.CustomerID, "pro_reports") || f.entitled(*x.CustomerID, "basic_reports") {
		t.Fatal("features switched before the period's end")
	}

	f.advance("32d")
	got = f.sub(x.ID)
	if got.PlanID != basic.ID || *got.Amount != "10000000" || got.PendingPlanID != nil || got.Status != "active" {
		t.Fatalf("after the renewal: %s", got.Raw)
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(pays.Data) != 2 || pays.Data[0].Amount != "10000000" || !pays.Data[0].PeriodStart.Equal(*x.CurrentPeriodEnd) {
		t.Fatalf("payments: %+v", pays.Data)
	}
	if f.entitled(*x.CustomerID, "pro_reports") || !f.entitled(*x.CustomerID, "basic_reports") {
		t.Fatal("features did not switch with the plan")
	}
	types := f.eventTypes()
	if n := count(types, "subscription.updated"); n != 5 || types[len(types)-1] != "subscription.renewed" {
		t.Fatalf("events: %v", types)
	}
}

// An immediate downgrade credits the rest of the period, an upgrade within
// what the payer authorized charges it as a payment with a proration line,
// and one above it answers authorization_required with a checkout URL.
func TestPlanChangeNow(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	premium := f.plan(client.PlanParams{Name: "Premium", Amount: "30000000", Interval: "month"})
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")
	f.advance("10d")

	got, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"})
	if err != nil {
		t.Fatal(err)
	}
	if got.PlanID != basic.ID || *got.Amount != "10000000" || !got.CurrentPeriodEnd.Equal(*x.CurrentPeriodEnd) {
		t.Fatalf("after the downgrade: %s", got.Raw)
	}
	if f.entitled(*x.CustomerID, "pro_reports") || !f.entitled(*x.CustomerID, "basic_reports") {
		t.Fatal("features did not switch at once")
	}
	bal, err := f.c.GetCreditBalance(f.ctx, *x.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	// About two thirds of 10 USDC (a 30- or 31-day month, 10 days in).
	if bal.Balance < "6000000" || bal.Balance > "6800000" || len(bal.Balance) != 7 {
		t.Fatalf("credit balance %s", bal.Balance)
	}

	got, err = f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID, At: "now"})
	if err != nil {
		t.Fatal(err)
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(pays.Data) != 2 || got.LatestPaymentID == nil || pays.Data[0].ID != *got.LatestPaymentID {
		t.Fatalf("payments: %+v", pays.Data)
	}
	var lines []struct{ Kind, Amount string }
	if err := json.Unmarshal(pays.Data[0].Lines, &lines); err != nil || len(lines) != 1 || lines[0].Kind != "proration" ||
		lines[0].Amount != pays.Data[0].Amount {
		t.Fatalf("lines %s: %v", pays.Data[0].Lines, err)
	}

	_, err = f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: premium.ID, At: "now"})
	e := apiErr(t, err, http.StatusConflict, "authorization_required")
	if !strings.HasPrefix(e.CheckoutURL, f.url+"/checkout/"+x.ID+"?") || !strings.Contains(e.CheckoutURL, "plan="+premium.ID) {
		t.Fatalf("checkout_url %q", e.CheckoutURL)
	}
	if got := f.sub(x.ID); got.PlanID != pro.ID {
		t.Fatalf("the refused change changed the plan: %s", got.Raw)
	}
	if n := count(f.eventTypes(), "subscription.updated"); n != 2 {
		t.Fatalf("events: %v", f.eventTypes())
	}
}

// Bad input answers the contract's codes, naming the field, and changes
// nothing.
func TestPlanChangeRefusals(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")
	ended := f.subscribe(basic.ID, rail.WalletSucceeds, "u_2")
	if _, err := f.c.CancelSubscription(f.ctx, ended.ID, client.CancelParams{AtPeriodEnd: new(bool)}); err != nil {
		t.Fatal(err)
	}
	meter, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		t.Fatal(err)
	}
	metered := f.plan(client.PlanParams{Name: "Usage", Amount: "5000000", Interval: "month", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":"1000"}`)})
	metered2 := f.plan(client.PlanParams{Name: "Usage 2", Amount: "4000000", Interval: "month", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":"500"}`)})
	mx := f.subscribe(metered.ID, rail.WalletSucceeds, "u_3")
	// Another merchant's plan, and this merchant's live-mode plan.
	_, otherKey := f.bundle.key(f.bundle.merchant("Other"), tenant.Test)
	other := f.bundle.client(otherKey)
	otherPlan, err := other.CreatePlan(f.ctx, client.PlanParams{Name: "Other", Amount: "1000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	_, liveKey := f.bundle.key(f.m, tenant.Live)
	livePlan, err := f.bundle.client(liveKey).CreatePlan(f.ctx, client.PlanParams{Name: "Live", Amount: "1000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/subscriptions/" + x.ID + "/change"
	for _, c := range []struct {
		path, body string
		status     int
		code, name string
	}{
		{path, `{"plan":"` + otherPlan.ID + `"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"` + livePlan.ID + `"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"` + metered.ID + `"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"price_nope"}`, 400, "invalid_request", "plan"},
		{path, `{}`, 400, "invalid_request", "plan"},
		{path, `{"plan":7}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"price_\u0000"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"` + strings.Repeat("é", 300) + `"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"<script>alert(1)</script>"}`, 400, "invalid_request", "plan"},
		{path, `{"plan":"` + basic.ID + `","at":"tomorrow"}`, 400, "invalid_request", "at"},
		{path, `{"plan":"` + basic.ID + `","preview":"yes"}`, 400, "invalid_request", "preview"},
		{path, `{"plan":"` + basic.ID + `","colour":"red"}`, 400, "invalid_request", "colour"},
		{path, `{"plan":"` + basic.ID + `","plan":"` + basic.ID + `"}`, 400, "invalid_request", "plan"},
		{path, `[]`, 400, "invalid_request", ""},
		{path, `{`, 400, "invalid_json", ""},
		{"/v1/subscriptions/" + mx.ID + "/change", `{"plan":"` + metered2.ID + `","at":"now"}`, 400, "invalid_request", "at"},
		{"/v1/subscriptions/" + mx.ID + "/change", `{"plan":"` + basic.ID + `"}`, 400, "invalid_request", "plan"},
		{"/v1/subscriptions/" + ended.ID + "/change", `{"plan":"` + pro.ID + `"}`, 400, "invalid_request", "subscription"},
		{"/v1/subscriptions/sub_nope/change", `{"plan":"` + pro.ID + `"}`, 404, "resource_not_found", ""},
		{"/v1/plans/" + pro.ID + "/migrate", `{"to":"` + metered.ID + `"}`, 400, "invalid_request", "to"},
		{"/v1/plans/" + pro.ID + "/migrate", `{"to":"` + otherPlan.ID + `"}`, 400, "invalid_request", "to"},
		{"/v1/plans/" + otherPlan.ID + "/migrate", `{"to":"` + pro.ID + `"}`, 404, "resource_not_found", ""},
	} {
		status, _, body := f.raw("POST", c.path, f.key, c.body)
		var env struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal([]byte(body), &env)
		if status != c.status || env.Error.Code != c.code || !strings.HasPrefix(env.Error.Message, c.name) {
			t.Errorf("%s %.80s: %d %s, want %d %s naming %q", c.path, c.body, status, body, c.status, c.code, c.name)
		}
	}
	// The metered subscription changes plan at its period's end.
	if got, err := f.c.ChangeSubscription(f.ctx, mx.ID, client.ChangeParams{Plan: metered2.ID}); err != nil || *got.PendingPlanID != metered2.ID {
		t.Fatalf("metered change: %v", err)
	}
	if types := f.eventTypes(); !slices.Contains(types, "subscription.updated") || count(types, "subscription.updated") != 1 {
		t.Fatalf("events: %v", types)
	}
}

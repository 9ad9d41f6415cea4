package daemon_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// money is a test merchant with a client, for the money path's tests.
type moneyFixture struct {
	*bundle
	c   *client.Client
	key string
	m   string
	ctx context.Context
}

func setupMoney(t testing.TB, opts ...func(*daemon.Config)) *moneyFixture {
	t.Helper()
	b := setup(t, opts...)
	m := b.merchant("Acme Widgets")
	_, key := b.key(m, tenant.Test)
	return &moneyFixture{bundle: b, c: b.client(key), key: key, m: m, ctx: context.Background()}
}

func (f *moneyFixture) plan(p client.PlanParams) *client.Plan {
	f.t.Helper()
	pl, err := f.c.CreatePlan(f.ctx, p)
	if err != nil {
		f.t.Fatal(err)
	}
	return pl
}

func (f *moneyFixture) subscribe(planID, payer, ext string) *client.Subscription {
	f.t.Helper()
	res, err := f.c.Pay(f.ctx, planID, client.CheckoutParams{Payer: payer, ExternalCustomerID: ext})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Subscription
}

func (f *moneyFixture) advance(by string) {
	f.t.Helper()
	if _, err := f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{By: by}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *moneyFixture) sub(id string) *client.Subscription {
	f.t.Helper()
	x, err := f.c.GetSubscription(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return x
}

// eventTypes returns the merchant's event types, oldest first.
func (f *moneyFixture) eventTypes() []string {
	f.t.Helper()
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		out = append(out, page.Data[i].Type)
	}
	return out
}

// cancelAts are the cancel_at of the subscription.updated events of
// subscription subID, oldest first ("null" for none).
func (f *moneyFixture) cancelAts(subID string) []string {
	f.t.Helper()
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		e := page.Data[i]
		var x struct {
			ID       string     `json:"id"`
			CancelAt *time.Time `json:"cancel_at"`
		}
		if err := json.Unmarshal(e.Data, &x); err != nil {
			f.t.Fatal(err)
		}
		if e.Type != "subscription.updated" || x.ID != subID {
			continue
		}
		if x.CancelAt == nil {
			out = append(out, "null")
		} else {
			out = append(out, x.CancelAt.UTC().Format(time.RFC3339))
		}
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func TestInvoicePaidOnceWithMagicWallets(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "9000000", Description: "Pro plan"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletInsufficient})
	apiErr(t, err, 402, "payment_failed")
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: "0x1111111111111111111111111111111111111111"})
	apiErr(t, err, 400, "invalid_request")
	res, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletTransientOnce})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Payment
	if p.Status != "succeeded" || p.Amount != "9000000" || p.InvoiceID == nil || *p.InvoiceID != inv.ID || p.TxHash == nil {
		t.Fatalf("payment %s", p.Raw)
	}
	again, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletTransientOnce})
	if err != nil || again.Payment.ID != p.ID {
		t.Fatalf("double submit: %v %v", again, err)
	}
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	apiErr(t, err, 409, "invoice_not_open")
	got, err := f.c.GetInvoice(f.ctx, inv.ID)
	if err != nil || got.Status != "paid" || got.PaymentID == nil || *got.PaymentID != p.ID {
		t.Fatalf("invoice after payment: %v %v", got, err)
	}
	if _, err := f.c.VoidInvoice(f.ctx, inv.ID); err == nil {
		t.Fatal("a paid invoice was voided")
	}
	if n := count(f.eventTypes(), "invoice.paid"); n != 1 {
		t.Fatalf("%d invoice.paid events", n)
	}
	list, err := f.c.ListPayments(f.ctx, client.ListParams{})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("payments: %v %v", list, err)
	}
	_, err = f.c.Pay(f.ctx, "inv_nope", client.CheckoutParams{Payer: rail.WalletSucceeds})
	apiErr(t, err, 404, "resource_not_found")
}

// Payers racing for one invoice: one wins, the others get 409, one payment.
func TestInvoiceConcurrentPayers(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "5000000", Description: "Race"})
	if err != nil {
		t.Fatal(err)
	}
	payers := []string{rail.WalletSucceeds, rail.WalletTransientOnce, rail.WalletRevokesAfter1st, rail.WalletFailsTwiceAfter1}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, conflicts := 0, 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: payers[i%len(payers)]})
			mu.Lock()
			defer mu.Unlock()
			var e *client.Error
			switch {
			case err == nil:
				won++
			case asErr(err, &e) && e.Code == "invoice_not_open":
				conflicts++
			default:
				t.Errorf("pay: %v", err)
			}
		}()
	}
	wg.Wait()
	list, err := f.c.ListPayments(f.ctx, client.ListParams{})
	if err != nil || len(list.Data) != 1 || won < 1 || won+conflicts != 12 {
		t.Fatalf("payments %d, won %d, conflicts %d (%v)", len(list.Data), won, conflicts, err)
	}
	if n := count(f.eventTypes(), "invoice.paid"); n != 1 {
		t.Fatalf("%d invoice.paid events", n)
	}
}

func TestLicensedSubscriptionRenews(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	if x.Status != "active" || x.LatestPaymentID == nil || x.CurrentPeriodEnd.Sub(*x.CurrentPeriodStart) != 7*24*time.Hour {
		t.Fatalf("subscription %s", x.Raw)
	}
	_, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1"})
	apiErr(t, err, 409, "already_subscribed")
	f.advance("15d")
	x2 := f.sub(x.ID)
	if x2.Status != "active" || !x2.CurrentPeriodStart.Equal(x.CurrentPeriodStart.Add(14*24*time.Hour)) {
		t.Fatalf("after 15 days: %s", x2.Raw)
	}
	types := f.eventTypes()
	if count(types, "subscription.active") != 1 || count(types, "subscription.renewed") != 2 {
		t.Fatalf("events %v", types)
	}
	pays, _ := f.c.ListPayments(f.ctx, client.ListParams{})
	if len(pays.Data) != 3 {
		t.Fatalf("%d payments, want 3", len(pays.Data))
	}
	// Renewals pay the wallet the first payment paid: the merchant's.
	payee := func(p client.Payment) string {
		if p.Payee == nil {
			return ""
		}
		return *p.Payee
	}
	first := payee(pays.Data[len(pays.Data)-1])
	for _, pay := range pays.Data {
		if first == "" || payee(pay) != first {
			t.Fatalf("payment %s pays %q; the first paid %q", pay.ID, payee(pay), first)
		}
	}
	clock, err := f.c.GetTestClock(f.ctx)
	if err != nil || clock.Now.Before(time.Now().Add(15*24*time.Hour-time.Minute)) {
		t.Fatalf("clock %v %v", clock, err)
	}
}

func TestDunningRecoversAndRevocation(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	recovers := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_recovers")
	revokes := f.subscribe(p.ID, rail.WalletRevokesAfter1st, "u_revokes")
	_, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletInsufficient, ExternalCustomerID: "u_poor"})
	apiErr(t, err, 402, "payment_failed")
	f.advance("7d1h")
	if x := f.sub(recovers.ID); x.Status != "past_due" {
		t.Fatalf("after the failed renewal: %s", x.Raw)
	}
	if x := f.sub(revokes.ID); x.Status != "revoked" || x.EndedAt == nil {
		t.Fatalf("revoked wallet: %s", x.Raw)
	}
	f.advance("1d") // first retry fails
	if x := f.sub(recovers.ID); x.Status != "past_due" {
		t.Fatalf("after the first retry: %s", x.Raw)
	}
	f.advance("2d") // second retry succeeds
	if x := f.sub(recovers.ID); x.Status != "active" {
		t.Fatalf("after the second retry: %s", x.Raw)
	}
	types := f.eventTypes()
	if count(types, "subscription.payment_failed") != 1 || count(types, "subscription.revoked") != 1 || count(types, "subscription.renewed") != 1 {
		t.Fatalf("events %v", types)
	}
}

func TestDunningExhausted(t *testing.T) {
	t.Parallel()
	f := setupMoney(t, func(c *daemon.Config) { c.DunningSchedule = []time.Duration{24 * time.Hour} })
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_1")
	f.advance("9d")
	got := f.sub(x.ID)
	if got.Status != "canceled" || got.EndedAt == nil {
		t.Fatalf("after dunning: %s", got.Raw)
	}
	if types := f.eventTypes(); count(types, "subscription.dunning_exhausted") != 1 {
		t.Fatalf("events %v", types)
	}
}

func TestMeteredSubscriptionIsRated(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	meter, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "sum"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "3000000", Interval: "week", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`)})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	if x.LatestPaymentID != nil {
		t.Fatalf("a metered checkout charged: %s", x.Raw)
	}
	for _, v := range []string{"600", "500"} {
		if _, err := f.c.SendMeterEvent(f.ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_1", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	up, err := f.c.UpcomingCharge(f.ctx, x.ID)
	if err != nil || up.Amount != "1000000" || up.Object != "upcoming_charge" || len(up.Lines) == 0 {
		t.Fatalf("upcoming: %+v %v", up, err)
	}
	f.advance("7d2h")
	got := f.sub(x.ID)
	if got.LatestPaymentID == nil {
		t.Fatalf("not charged: %s", got.Raw)
	}
	pay, err := f.c.GetPayment(f.ctx, *got.LatestPaymentID)
	if err != nil || pay.Amount != "1000000" || len(pay.Lines) == 0 || pay.PeriodStart == nil {
		t.Fatalf("payment %v %v", pay, err)
	}
}

func TestCancelSubscription(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Monthly", Amount: "2000000", Interval: "month"})
	a := f.subscribe(p.ID, rail.WalletSucceeds, "u_a")
	b := f.subscribe(p.ID, rail.WalletSucceeds, "u_b")
	// Twice: the second changes nothing and emits nothing.
	for range 2 {
		if x, err := f.c.CancelSubscription(f.ctx, a.ID, client.CancelParams{}); err != nil || x.CancelAt == nil || !x.CancelAt.Equal(*a.CurrentPeriodEnd) {
			t.Fatalf("cancel at period end: %v %v", x, err)
		}
	}
	if got := f.cancelAts(a.ID); !slices.Equal(got, []string{a.CurrentPeriodEnd.UTC().Format(time.RFC3339)}) {
		t.Fatalf("subscription.updated of the cancel at period end: cancel_at %v", got)
	}
	now := false
	if x, err := f.c.CancelSubscription(f.ctx, b.ID, client.CancelParams{AtPeriodEnd: &now}); err != nil || x.Status != "expired" {
		t.Fatalf("cancel now: %v %v", x, err)
	}
	_, err := f.c.CancelSubscription(f.ctx, b.ID, client.CancelParams{})
	apiErr(t, err, 400, "invalid_request")
	f.advance("32d")
	if x := f.sub(a.ID); x.Status != "expired" || x.EndedAt == nil || !x.EndedAt.Equal(*a.CurrentPeriodEnd) {
		t.Fatalf("after the period: %s", x.Raw)
	}
	if types := f.eventTypes(); count(types, "subscription.expired") != 2 || count(types, "subscription.renewed") != 0 {
		t.Fatalf("events %v", types)
	}
}

func asErr(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

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

func ptrInt(v int) *int { return &v }

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

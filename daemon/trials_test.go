package daemon_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// trialPlan makes a monthly 9 USDC plan with a trial of days days.
func (f *moneyFixture) trialPlan(days int, features ...client.PlanFeature) *client.Plan {
	f.t.Helper()
	p := f.plan(client.PlanParams{Name: "Pro", Amount: "9000000", Interval: "month", TrialDays: &days, Features: features})
	if p.TrialDays == nil || *p.TrialDays != days {
		f.t.Fatalf("plan trial_days: %s", p.Raw)
	}
	return p
}

// subEvents returns the types of the events about subscription id, oldest
// first, with their times.
func (f *moneyFixture) subEvents(id string) (types []string, at []time.Time) {
	f.t.Helper()
	for _, e := range f.feed() {
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.ID == id {
			types, at = append(types, e.Type), append(at, e.CreatedAt)
		}
	}
	return types, at
}

func (f *moneyFixture) payments() []client.Payment {
	f.t.Helper()
	page, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	return page.Data
}

// A trial checkout authorizes without charging: trialing, trial_end 14
// days on, the plan's features active, no payment. One advance through
// trial_will_end (3 days before) and trial_end runs both in time order;
// the first period starts at trial_end and is charged then.
func TestTrialCheckoutThenFirstCharge(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	if _, err := f.c.CreateFeature(f.ctx, client.FeatureParams{Key: "pro", Name: "Pro"}); err != nil {
		t.Fatal(err)
	}
	p := f.trialPlan(14, client.PlanFeature{FeatureKey: "pro"})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_trial")
	if x.Status != "trialing" || x.TrialEnd == nil || !x.TrialEnd.Equal(x.CreatedAt.Add(14*24*time.Hour)) || x.LatestPaymentID != nil {
		t.Fatalf("trial checkout: %s", x.Raw)
	}
	if !x.CurrentPeriodEnd.Equal(*x.TrialEnd) {
		t.Fatalf("the trial is the current period: %s", x.Raw)
	}
	if pays := f.payments(); len(pays) != 0 {
		t.Fatalf("a trial checkout made %d payments", len(pays))
	}
	if ent, err := f.c.CheckEntitlement(f.ctx, *x.CustomerID, "pro"); err != nil || !ent.Entitled {
		t.Fatalf("feature during the trial: %+v %v", ent, err)
	}
	if types, _ := f.subEvents(x.ID); strings.Join(types, ",") != "subscription.active" {
		t.Fatalf("events at checkout: %v", types)
	}
	up, err := f.c.UpcomingCharge(f.ctx, x.ID)
	if err != nil || up.Amount != "9000000" || up.PeriodStart == nil || !up.PeriodStart.Equal(*x.TrialEnd) {
		t.Fatalf("upcoming charge during the trial: %+v %v", up, err)
	}

	f.advance("15d")
	types, at := f.subEvents(x.ID)
	if strings.Join(types, ",") != "subscription.active,subscription.trial_will_end,subscription.active" {
		t.Fatalf("events after the trial: %v", types)
	}
	if !at[1].Equal(x.TrialEnd.Add(-72*time.Hour)) || !at[2].Equal(*x.TrialEnd) {
		t.Fatalf("trial_will_end at %s, first charge at %s; trial_end %s", at[1], at[2], x.TrialEnd)
	}
	got := f.sub(x.ID)
	if got.Status != "active" || !got.CurrentPeriodStart.Equal(*x.TrialEnd) || !got.CurrentPeriodEnd.Equal(x.TrialEnd.AddDate(0, 1, 0)) {
		t.Fatalf("after the trial: %s", got.Raw)
	}
	pays := f.payments()
	if len(pays) != 1 || pays[0].Amount != "9000000" || !pays[0].PeriodStart.Equal(*x.TrialEnd) || got.LatestPaymentID == nil || *got.LatestPaymentID != pays[0].ID {
		t.Fatalf("first charge: %d payments, %s", len(pays), got.Raw)
	}
	// The next period renews as usual; no second notice.
	f.advance("31d")
	if types, _ := f.subEvents(x.ID); count(types, "subscription.trial_will_end") != 1 || count(types, "subscription.renewed") != 1 {
		t.Fatalf("after a renewal: %v", types)
	}
}

// A trial of 3 days or less is told it will end at once, exactly once.
func TestTrialShortNoticeAtOnce(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.trialPlan(2)
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_short")
	types, at := f.subEvents(x.ID)
	if strings.Join(types, ",") != "subscription.active,subscription.trial_will_end" || !at[1].Equal(x.CreatedAt) {
		t.Fatalf("events at checkout: %v %v", types, at)
	}
	f.advance("1d")
	f.advance("2d")
	if types, _ := f.subEvents(x.ID); strings.Join(types, ",") != "subscription.active,subscription.trial_will_end,subscription.active" {
		t.Fatalf("events after the trial: %v", types)
	}
}

// Dunning during a trial's first charge: it fails at trial_end (past_due,
// subscription.payment_failed), the first retry fails, the second succeeds.
func TestTrialFirstChargeDunning(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.trialPlan(7)
	x := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_dun")
	f.advance("7d1h")
	got := f.sub(x.ID)
	if got.Status != "past_due" || got.LatestPaymentID != nil {
		t.Fatalf("after a failed first charge: %s", got.Raw)
	}
	if types, _ := f.subEvents(x.ID); types[len(types)-1] != "subscription.payment_failed" {
		t.Fatalf("events: %v", types)
	}
	f.advance("5d")
	got = f.sub(x.ID)
	pays := f.payments()
	if got.Status != "active" || len(pays) != 1 || !pays[0].PeriodStart.Equal(*x.TrialEnd) {
		t.Fatalf("after the recovering retry: %s, %d payments", got.Raw, len(pays))
	}
}

// The trial's first charge failing on every retry ends it like any dunning.
func TestTrialFirstChargeDunningExhausted(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.trialPlan(5)
	x := f.subscribe(p.ID, rail.WalletFailsAfter1st, "u_lost")
	f.advance("11d")
	if got := f.sub(x.ID); got.Status != "canceled" || len(f.payments()) != 0 {
		t.Fatalf("after dunning: %s", got.Raw)
	}
	if types, _ := f.subEvents(x.ID); types[len(types)-1] != "subscription.dunning_exhausted" {
		t.Fatalf("events: %v", types)
	}
}

// A metered plan's trial rates only usage from trial_end on.
func TestTrialMeteredRatesOnlyAfterTrial(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	m, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls"})
	if err != nil {
		t.Fatal(err)
	}
	days := 7
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "100000000", Interval: "week", UsageType: "metered", Meter: m.ID,
		PricingModel: []byte(`{"kind":"per_unit","unitAmount":1000}`), TrialDays: &days})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_meter")
	if x.Status != "trialing" {
		t.Fatalf("metered trial: %s", x.Raw)
	}
	send := func(n int) {
		for range n {
			if _, err := f.c.SendMeterEvent(f.ctx, client.MeterEventParams{EventName: "calls", Value: "1", ExternalCustomerID: "u_meter"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(5) // during the trial: free
	f.advance("7d1m")
	if got := f.sub(x.ID); got.Status != "active" || !got.CurrentPeriodStart.Equal(*x.TrialEnd) {
		t.Fatalf("after the trial: %s", got.Raw)
	}
	send(3)
	f.advance("7d2h")
	pays := f.payments()
	if len(pays) != 1 || pays[0].Amount != "3000" || !pays[0].PeriodStart.Equal(*x.TrialEnd) {
		t.Fatalf("first metered period: %d payments %+v", len(pays), pays)
	}
}

// One trial per customer and product: a customer back after a trial pays
// at checkout; another customer still gets the trial.
func TestTrialOncePerCustomerAndProduct(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.trialPlan(30)
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_again")
	if _, err := f.c.CancelSubscription(f.ctx, x.ID, client.CancelParams{AtPeriodEnd: new(bool)}); err != nil {
		t.Fatal(err)
	}
	again := f.subscribe(p.ID, rail.WalletSucceeds, "u_again")
	if again.Status != "active" || again.TrialEnd != nil || again.LatestPaymentID == nil {
		t.Fatalf("second checkout after a trial: %s", again.Raw)
	}
	if pays := f.payments(); len(pays) != 1 || pays[0].Amount != "9000000" {
		t.Fatalf("second checkout charged %d payments", len(pays))
	}
	if other := f.subscribe(p.ID, rail.WalletSucceeds, "u_other"); other.Status != "trialing" {
		t.Fatalf("another customer: %s", other.Raw)
	}
}

// trial_days outside 1 to 730, not an integer, or hostile: 400
// invalid_request naming trial_days.
func TestTrialDaysRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, v := range []string{`0`, `731`, `-1`, `1.5`, `"7"`, `7e0`, `true`, `[]`, `{}`, `"\u0000"`, `"<script>"`,
		`99999999999999999999`, `"7 days"`} {
		status, _, body := b.raw("POST", "/v1/plans", key, `{"name":"Pro","amount":9000000,"interval":"month","trial_days":`+v+`}`)
		if status != 400 || !strings.Contains(body, `"invalid_request"`) || !strings.Contains(body, `trial_days`) {
			t.Errorf("trial_days %s: %d %s", v, status, body)
		}
	}
	status, _, body := b.raw("POST", "/v1/plans", key, `{"name":"Pro","amount":9000000,"interval":"month","trial_days":730}`)
	if status != 201 || !strings.Contains(body, `"trial_days":730`) {
		t.Fatalf("trial_days 730: %d %s", status, body)
	}
	status, _, body = b.raw("POST", "/v1/plans", key, `{"name":"Pro","amount":9000000,"interval":"month"}`)
	if status != 201 || !strings.Contains(body, `"trial_days":null`) {
		t.Fatalf("no trial: %d %s", status, body)
	}
}

// A change during a trial waits for its end (at: now is refused: nothing is
// charged during a trial); the first period starts on the new plan.
func TestTrialChangeAtTrialEnd(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.trialPlan(10)
	basic := f.plan(client.PlanParams{Name: "Basic", Amount: "5000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_change")
	_, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"})
	apiErr(t, err, 400, "invalid_request")
	changed, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID})
	if err != nil || changed.PendingPlanID == nil || *changed.PendingPlanID != basic.ID || !changed.PendingChangeAt.Equal(*x.TrialEnd) {
		t.Fatalf("change during the trial: %v %+v", err, changed)
	}
	f.advance("10d1h")
	got := f.sub(x.ID)
	pays := f.payments()
	if got.Status != "active" || got.PlanID != basic.ID || !got.CurrentPeriodEnd.Equal(x.TrialEnd.Add(7*24*time.Hour)) ||
		len(pays) != 1 || pays[0].Amount != "5000000" {
		t.Fatalf("after the trial: %s, %d payments", got.Raw, len(pays))
	}
}

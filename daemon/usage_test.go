package daemon_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// triggersOf returns the merchant's alert.triggered data, oldest first.
func triggersOf(t testing.TB, db *store.DB, merchantID string) []wire.AlertTrigger {
	t.Helper()
	var raws []string
	if err := db.Select(&raws, `SELECT data::text FROM events WHERE merchant_id = $1 AND type = 'alert.triggered' ORDER BY created_at, seq`, merchantID); err != nil {
		t.Fatal(err)
	}
	out := make([]wire.AlertTrigger, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checked waits until the alert job has made every check left so far.
func checked(t testing.TB, db *store.DB) {
	t.Helper()
	eventually(t, 30*time.Second, "alert checks made", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM alert_checks`)
		return n == 0
	})
}

func sendUsage(t testing.TB, c *client.Client, meter, ext, value string) *client.MeterEvent {
	t.Helper()
	e, err := c.SendMeterEvent(context.Background(), client.MeterEventParams{EventName: meter, ExternalCustomerID: ext, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A cancelled event counts nowhere: usage, entitlement used, the upcoming
// charge, rating and alerts; once its period is rated it cannot be
// cancelled. Alerts fire once per period, stamped with the test clock, and
// a period the clock moves into re-arms them.
func TestCancelledUsageCountsNowhereAndAlertsFireOncePerPeriod(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	ctx := f.ctx
	meter, err := f.c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "sum"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "3000000", Interval: "week", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`)})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	cus := *x.CustomerID
	if _, err := f.c.CreateFeature(ctx, client.FeatureParams{Key: "calls", Name: "Calls", Type: "metered", Meter: meter.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "calls", CustomerID: cus, LimitValue: "100000"}); err != nil {
		t.Fatal(err)
	}
	usageAlert, err := f.c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: meter.ID, Threshold: "1500"})
	if err != nil {
		t.Fatal(err)
	}
	spendAlert, err := f.c.CreateAlert(ctx, client.AlertParams{Type: "spend_threshold", Percent: 50, CustomerID: cus})
	if err != nil {
		t.Fatal(err)
	}
	sendUsage(t, f.c, "calls", "u_1", "600")
	mistake := sendUsage(t, f.c, "calls", "u_1", "500")
	cancelled, err := f.c.CancelMeterEvent(ctx, mistake.ID)
	if err != nil || cancelled.CancelledAt == nil || cancelled.ID != mistake.ID {
		t.Fatalf("cancel: %+v %v", cancelled, err)
	}
	if again, err := f.c.CancelMeterEvent(ctx, mistake.ID); err != nil || !again.CancelledAt.Equal(*cancelled.CancelledAt) {
		t.Fatalf("cancel again: %+v %v", again, err)
	}
	u, err := f.c.GetUsage(ctx, cus, client.UsageParams{Meter: "calls"})
	if err != nil || u.Value != "600" || !u.From.Equal(*x.CurrentPeriodStart) {
		t.Fatalf("usage after the cancel: %+v %v", u, err)
	}
	if ent, err := f.c.CheckEntitlement(ctx, cus, "calls"); err != nil || ent.Used == nil || *ent.Used != "600" {
		t.Fatalf("entitlement after the cancel: %+v %v", ent, err)
	}
	if up, err := f.c.UpcomingCharge(ctx, x.ID); err != nil || up.Amount != "500000" {
		t.Fatalf("upcoming after the cancel: %+v %v", up, err)
	}
	// 1,400 counted (1,900 with the cancelled event): no alert yet.
	sendUsage(t, f.c, "calls", "u_1", "800")
	checked(t, f.db)
	if trs := triggersOf(t, f.db, f.m); len(trs) != 0 {
		t.Fatalf("a cancelled event counted towards an alert: %+v", trs)
	}
	// 1,600: the usage alert (1,500) and the spend alert (rated 1.5 USDC,
	// 50% of 3 USDC) fire, once each however often usage is sent after.
	sendUsage(t, f.c, "calls", "u_1", "200")
	sendUsage(t, f.c, "calls", "u_1", "1")
	eventually(t, 5*time.Second, "both alerts triggered", func() bool { return len(triggersOf(t, f.db, f.m)) >= 2 })
	sendUsage(t, f.c, "calls", "u_1", "1")
	checked(t, f.db)
	trs := triggersOf(t, f.db, f.m)
	if len(trs) != 2 {
		t.Fatalf("triggers %+v", trs)
	}
	clock, err := f.c.GetTestClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		at, _ := time.Parse(time.RFC3339Nano, tr.TriggeredAt)
		if at.Before(clock.Now.Add(-time.Minute)) || tr.PeriodStart == nil || *tr.CustomerID != cus {
			t.Errorf("trigger %+v (clock %s)", tr, clock.Now)
		}
		switch tr.AlertID {
		case usageAlert.ID:
			if (tr.Value != "1600" && tr.Value != "1601") || *tr.Threshold != "1500" || tr.SubscriptionID != nil {
				t.Errorf("usage trigger %+v", tr)
			}
		case spendAlert.ID:
			if tr.SubscriptionID == nil || *tr.SubscriptionID != x.ID || *tr.Percent != 50 || (tr.Value != "1500000" && tr.Value != "1501000") {
				t.Errorf("spend trigger %+v", tr)
			}
		default:
			t.Errorf("trigger of %s", tr.AlertID)
		}
	}
	// The period is rated without the cancelled event; afterwards none of
	// its events can be cancelled.
	f.advance("7d2h")
	got := f.sub(x.ID)
	pay, err := f.c.GetPayment(ctx, *got.LatestPaymentID)
	if err != nil || pay.Amount != "1502000" {
		t.Fatalf("rated %+v %v", pay, err)
	}
	_, err = f.c.CancelMeterEvent(ctx, mistake.ID)
	if err != nil {
		t.Fatalf("an already cancelled event answers as it is: %v", err)
	}
	first := sendUsage(t, f.c, "calls", "u_1", "0")
	_ = first
	var billed *client.MeterEvent
	{
		var id string
		if err := f.db.Get(&id, `SELECT id FROM meter_events WHERE merchant_id = $1 AND value = 600`, f.m); err != nil {
			t.Fatal(err)
		}
		billed = &client.MeterEvent{ID: id}
	}
	_, err = f.c.CancelMeterEvent(ctx, billed.ID)
	apiErr(t, err, 409, "usage_already_billed")
	// The new period re-arms both alerts.
	sendUsage(t, f.c, "calls", "u_1", "1600")
	eventually(t, 5*time.Second, "alerts re-armed in the new period", func() bool { return len(triggersOf(t, f.db, f.m)) == 4 })
	trs = triggersOf(t, f.db, f.m)
	if *trs[3].PeriodStart == *trs[0].PeriodStart {
		t.Fatalf("same period: %+v", trs)
	}
}

// Exactly one alert.triggered for 32 concurrent writers on two daemons
// over one database, within 5 s of the last write.
func TestAlertFiresOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	noLimits := func(c *daemon.Config) { c.RateLimits = false }
	b, dbURL := setupListeningURL(t, noLimits)
	second := startDaemon(t, b.db, dbURL, noLimits)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	ca, cb := b.client(key), client.New(second.URL, key, client.WithMaxRetries(0))
	ctx := context.Background()
	meter, err := ca.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ { // others, never crossed
		if _, err := ca.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: meter.ID, Threshold: "1000000"}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := ca.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: meter.ID, Threshold: "100", ExternalCustomerID: "u_hot"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		c := ca
		if w%2 == 1 {
			c = cb
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_hot"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	eventually(t, 5*time.Second, "alert.triggered", func() bool { return len(triggersOf(t, b.db, m)) > 0 })
	checked(t, b.db)
	trs := triggersOf(t, b.db, m)
	if len(trs) != 1 || trs[0].AlertID != a.ID || trs[0].Value == "" {
		t.Fatalf("triggers %+v", trs)
	}
}

// Credit balance alerts fire once per drop below the threshold.
func TestCreditBalanceAlert(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	ctx := f.ctx
	if _, err := f.c.CreateAlert(ctx, client.AlertParams{Type: "credit_balance_below", Threshold: "5000000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GrantCredits(ctx, client.CreditGrantParams{Amount: "8000000", ExternalCustomerID: "u_1"}); err != nil {
		t.Fatal(err)
	}
	debit := func(amount string) {
		t.Helper()
		if _, err := f.c.DebitCredits(ctx, client.CreditDebitParams{Amount: amount, ExternalCustomerID: "u_1"}); err != nil {
			t.Fatal(err)
		}
	}
	debit("2000000") // 6: above
	debit("2000000") // 4: below
	debit("1000000") // 3: still below
	eventually(t, 5*time.Second, "alert.triggered", func() bool { return len(triggersOf(t, f.db, f.m)) == 1 })
	if _, err := f.c.GrantCredits(ctx, client.CreditGrantParams{Amount: "5000000", ExternalCustomerID: "u_1"}); err != nil {
		t.Fatal(err)
	}
	debit("4000000") // 8 → 4: below again
	eventually(t, 5*time.Second, "the second crossing", func() bool { return len(triggersOf(t, f.db, f.m)) == 2 })
	checked(t, f.db)
	if trs := triggersOf(t, f.db, f.m); len(trs) != 2 || trs[1].Value != "4000000" || trs[1].PeriodStart != nil {
		t.Fatalf("triggers %+v", trs)
	}
}

// Bad input over HTTP: each field with its code, hostile strings 400.
func TestUsageAndAlertRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	_, other := b.key(b.merchant("other"), tenant.Test)
	_, live := b.key(m, tenant.Live)
	c := b.client(key)
	ctx := context.Background()
	meter, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		t.Fatal(err)
	}
	otherMeter, err := b.client(other).CreateMeter(ctx, client.MeterParams{Key: "theirs", DisplayName: "Theirs"})
	if err != nil {
		t.Fatal(err)
	}
	ev := sendUsage(t, c, "calls", "u_1", "")
	cus := *ev.CustomerID
	for _, tc := range []struct {
		method, path, key, body string
		status                  int
		code, field             string
	}{
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls", key, "", 200, "", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=" + meter.ID + "&window=month", key, "", 200, "", ""},
		{"GET", "/v1/customers/" + cus + "/usage", key, "", 400, "invalid_request", "meter"},
		{"GET", "/v1/customers/cus_nope/usage?meter=calls", key, "", 404, "unknown_customer", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls", other, "", 404, "unknown_customer", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls", live, "", 404, "unknown_customer", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=nope", key, "", 404, "unknown_meter", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=" + otherMeter.ID, key, "", 404, "unknown_meter", ""},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", key, "", 400, "invalid_request", "from"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", key, "", 400, "invalid_request", "from"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&from=2020-01-01T00:00:00Z&window=day", key, "", 400, "invalid_request", "window"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&window=week", key, "", 400, "invalid_request", "window"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&from=yesterday", key, "", 400, "invalid_request", "from"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&to=99999-01-01T00:00:00Z", key, "", 400, "invalid_request", "to"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=ca%00lls", key, "", 400, "invalid_request", "meter"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=%ff", key, "", 400, "invalid_request", "meter"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&colour=red", key, "", 400, "invalid_request", "colour"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=calls&meter=calls", key, "", 400, "invalid_request", "meter"},
		{"GET", "/v1/customers/" + cus + "/usage?meter=" + strings.Repeat("9", 5000), key, "", 404, "unknown_meter", ""},
		{"POST", "/v1/meter-events/me_nope/cancel", key, "", 404, "resource_not_found", ""},
		{"POST", "/v1/meter-events/" + ev.ID + "/cancel", other, "", 404, "resource_not_found", ""},
		{"POST", "/v1/meter-events/" + url.PathEscape(strings.Repeat("x", 300)) + "/cancel", key, "", 404, "resource_not_found", ""},
		{"POST", "/v1/alerts", key, `{"type":"usage_threshold","meter":"` + meter.ID + `","threshold":"1.5"}`, 400, "invalid_request", "threshold"},
		{"POST", "/v1/alerts", key, `{"type":"usage_threshold","meter":"` + meter.ID + `","threshold":-3}`, 400, "invalid_request", "threshold"},
		{"POST", "/v1/alerts", key, `{"type":"usage_threshold","meter":"` + meter.ID + `","threshold":99999999999999999999999999}`, 400, "invalid_request", "threshold"},
		{"POST", "/v1/alerts", key, `{"type":"usage_threshold","threshold":3}`, 400, "invalid_request", "meter"},
		{"POST", "/v1/alerts", key, `{"type":"usage_threshold","meter":"` + otherMeter.ID + `","threshold":3}`, 404, "unknown_meter", ""},
		{"POST", "/v1/alerts", key, `{"type":"spend_threshold","percent":0}`, 400, "invalid_request", "percent"},
		{"POST", "/v1/alerts", key, `{"type":"spend_threshold","percent":101}`, 400, "invalid_request", "percent"},
		{"POST", "/v1/alerts", key, `{"type":"spend_threshold","percent":"50"}`, 400, "invalid_request", "percent"},
		{"POST", "/v1/alerts", key, `{"type":"spend_threshold","percent":50,"customer_id":"` + cus + `"}`, 201, "", ""},
		{"POST", "/v1/alerts", other, `{"type":"spend_threshold","percent":50,"customer_id":"` + cus + `"}`, 400, "unknown_customer", ""},
		{"POST", "/v1/alerts", key, `{"type":"credit_balance_below","threshold":1,"name":"a\u0000b"}`, 400, "invalid_request", "name"},
		{"POST", "/v1/alerts", key, `{"type":"credit_balance_below","threshold":1,"name":"` + strings.Repeat("é", 201) + `"}`, 400, "invalid_request", "name"},
		{"POST", "/v1/alerts", key, `{"type":"nope"}`, 400, "invalid_request", "type"},
		{"POST", "/v1/alerts/alert_nope/archive", key, "", 404, "resource_not_found", ""},
		{"GET", "/v1/alerts?limit=0", key, "", 400, "invalid_request", "limit"},
		{"DELETE", "/v1/alerts", key, "", 405, "method_not_allowed", ""},
	} {
		status, _, body := b.raw(tc.method, tc.path, tc.key, tc.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal([]byte(body), &e)
		if status != tc.status || e.Error.Code != tc.code || !strings.HasPrefix(e.Error.Message, tc.field) {
			t.Errorf("%s %.120s %s: %d %.300s", tc.method, tc.path, tc.body, status, body)
		}
	}
}

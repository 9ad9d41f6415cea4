package daemon_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// Once the raw usage events of a period are gone (archived, then dropped
// by retention), usage summaries over it, entitlement checks and upcoming
// charges answer as before, from the hourly and daily buckets; and rating
// a period whose whole hours lost their rows still charges all of its usage.
func TestUsageAnswersFromAggregatesAfterEventsAreDropped(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	meter, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "sum"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "90000000", Interval: "week", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`)})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	cus, start1, end1 := *x.CustomerID, *x.CurrentPeriodStart, *x.CurrentPeriodEnd
	grantUsage(t, f.c, "calls", cus, "1000000")
	var n int
	send := func(at time.Time) (string, int64) {
		t.Helper()
		n++
		v := int64(10 + n%40)
		e, err := f.c.SendMeterEvent(f.ctx, client.MeterEventParams{EventName: "calls", CustomerID: cus, Value: fmt.Sprint(v), Timestamp: &at})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID, v
	}
	hour := func(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

	// The first period's usage, then its rating.
	f.advance("6d")
	var used1 int64
	for at := start1.Add(time.Minute); at.Before(start1.Add(6 * 24 * time.Hour)); at = at.Add(5*time.Hour + 17*time.Minute) {
		_, v := send(at)
		used1 += v
	}
	f.advance("1d2h")
	if got := f.sub(x.ID); got.CurrentPeriodStart == nil || !got.CurrentPeriodStart.Equal(end1) {
		t.Fatalf("the first period was not rated: %s", got.Raw)
	}
	// The second period's usage so far, in whole hours after its first.
	f.advance("3d")
	now := f.clockNow(t)
	var used2 int64
	for at := hour(end1).Add(time.Hour + 7*time.Minute); at.Before(now.Add(-2 * time.Minute)); at = at.Add(3*time.Hour + 11*time.Minute) {
		_, v := send(at)
		used2 += v
	}
	// At now itself, so the delete below (of the hours before now's) keeps
	// it at any minute of the hour.
	lastID, lastV := send(now)
	used2 += lastV

	type answers struct {
		period, days, entitled, upcoming string
	}
	read := func() answers {
		t.Helper()
		from, to := hour(start1), hour(end1).Add(time.Hour)
		whole, err := f.c.GetUsage(f.ctx, cus, client.UsageParams{Meter: "calls", From: &from, To: &to})
		if err != nil {
			t.Fatal(err)
		}
		days, err := f.c.GetUsage(f.ctx, cus, client.UsageParams{Meter: "calls", From: &from, To: &to, Window: "day"})
		if err != nil {
			t.Fatal(err)
		}
		e, err := f.c.CheckEntitlement(f.ctx, cus, "f.calls")
		if err != nil {
			t.Fatal(err)
		}
		up, err := f.c.UpcomingCharge(f.ctx, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		return answers{period: whole.Value, days: fmt.Sprint(days.Windows), entitled: *e.Used, upcoming: up.Amount + " " + string(up.Raw)}
	}
	before := read()
	if before.period != fmt.Sprint(used1) || before.entitled != fmt.Sprint(used1+used2) || before.upcoming[:len(fmt.Sprint((used2-100)*1000))] != fmt.Sprint((used2-100)*1000) {
		t.Fatalf("before the drop: %+v; want period %d, used %d, upcoming %d", before, used1, used1+used2, (used2-100)*1000)
	}

	// Retention drops the first period's rows. Deleting the second
	// period's whole hours too shows that its answers come from the buckets.
	res, err := f.db.Exec(`DELETE FROM meter_events WHERE merchant_id = $1 AND event_timestamp < $2`, f.m, hour(now))
	if err != nil {
		t.Fatal(err)
	}
	if gone, _ := res.RowsAffected(); gone < 30 {
		t.Fatalf("only %d events deleted", gone)
	}
	if after := read(); after != before {
		t.Fatalf("after the drop:\n%+v\nbefore:\n%+v", after, before)
	}

	// Cancelling a recent event recomputes the entitlement's usage without
	// losing the dropped events.
	if _, err := f.c.CancelMeterEvent(f.ctx, lastID); err != nil {
		t.Fatal(err)
	}
	if e, err := f.c.CheckEntitlement(f.ctx, cus, "f.calls"); err != nil || *e.Used != fmt.Sprint(used1+used2-lastV) {
		t.Fatalf("after a cancel: %s %v, want used %d", e.Raw, err, used1+used2-lastV)
	}
	// The second period is rated on all of its usage but the cancelled event.
	f.advance("4d2h")
	got := f.sub(x.ID)
	if got.LatestPaymentID == nil {
		t.Fatalf("the second period was not charged: %s", got.Raw)
	}
	pay, err := f.c.GetPayment(f.ctx, *got.LatestPaymentID)
	if want := fmt.Sprint((used2 - lastV - 100) * 1000); err != nil || pay.Amount != want {
		t.Fatalf("the second period's payment: %+v %v, want %s", pay, err, want)
	}
}

// clockNow is the merchant's test clock.
func (f *moneyFixture) clockNow(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	if err := f.db.Get(&now, `SELECT now() + coalesce((SELECT ahead_us FROM test_clocks WHERE merchant_id = $1), 0) * interval '1 microsecond'`, f.m); err != nil {
		t.Fatal(err)
	}
	return now
}

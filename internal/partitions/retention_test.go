package partitions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// usageSetup makes a merchant with a meter in db and returns its scope and
// the meter's id.
func usageSetup(t *testing.T, db *store.DB, merchant string) (tenant.Scope, string) {
	t.Helper()
	ctx := context.Background()
	s := tenant.Scope{MerchantID: merchant, Mode: tenant.Live}
	if _, err := db.ExecContext(ctx, `INSERT INTO merchants (id, name) VALUES ($1, $1)`, merchant); err != nil {
		t.Fatal(err)
	}
	m, _, err := metering.Create(ctx, db, s, metering.Input{Key: "tokens", DisplayName: "Tokens"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s, m.ID
}

// ingest stores events of value 1 at each of stamps, received at now, and
// returns their customer's id.
func ingest(t *testing.T, db *store.DB, s tenant.Scope, now time.Time, stamps ...time.Time) string {
	t.Helper()
	var ins []metering.EventInput
	for _, at := range stamps {
		ins = append(ins, metering.EventInput{EventName: "tokens", Value: ptr(int64(1)), ExternalCustomerID: ptr("cus-ret"), Timestamp: ptr(at)})
	}
	res, err := metering.NewIngester().Ingest(context.Background(), db, s, ins, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return *res[0].Event.CustomerID
}

// Weeks past the retention are dropped once no metered period still to be
// rated starts in them; usage summaries of those weeks keep answering from
// the daily buckets.
func TestRetentionDropsRatedWeeksAndKeepsSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	s, meterID := usageSetup(t, db, "mch_ret")
	now := time.Now().UTC()
	me := partitions.MeterEvents()
	withoutLegacy(t, db, now)
	// Usage of 60 weeks ago, sent then (a database kept over a year).
	then := now.AddDate(0, 0, -7*60)
	for w := me.Start(then.AddDate(0, 0, -7*6)); w.Before(me.Start(now.AddDate(0, 0, -7*6))); w = me.Next(w) {
		if _, err := db.ExecContext(ctx, `SELECT partition_add('meter_events', 'event_timestamp', $1, $2)`, w, me.Next(w)); err != nil {
			t.Fatal(err)
		}
	}
	day := then.Truncate(24 * time.Hour)
	// The last event is sent at then, in then's day: an hour into it, or
	// then itself in the day's first hour (never in the future).
	later := day.Add(time.Hour)
	if later.After(then) {
		later = then
	}
	customer := ingest(t, db, s, then, day.Add(-3*24*time.Hour), day.Add(-2*time.Hour), later)
	ingest(t, db, s, now, now.Add(-time.Hour))
	from, to := day.Add(-10*24*time.Hour), day.Add(24*time.Hour)
	summary := func() metering.Summary {
		t.Helper()
		u, err := metering.Usage(ctx, db, s, customer, metering.UsageInput{Meter: meterID, From: &from, To: &to, Window: metering.Day}, now)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	before := summary()
	if before.Value != "3" {
		t.Fatalf("usage before %s", before.Value)
	}

	// A metered subscription whose current period started back then has
	// not been rated: weeks wholly before its period may go, not its own.
	_, err := db.ExecContext(ctx, `INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, usage_type,
			meter_id, current_period_start, current_period_end)
		VALUES ($1, 'live', 'sub_ret', 'plan_ret', $2, 'active', 'metered', $3, $4, $5)`,
		s.MerchantID, customer, meterID, day.Add(-5*24*time.Hour), now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	retention := 400 * 24 * time.Hour
	out, err := partitions.Drop(ctx, db, me, retention, now)
	if err != nil {
		t.Fatal(err)
	}
	periodStart := day.Add(-5 * 24 * time.Hour)
	if len(out.Kept) != 1 || !strings.Contains(out.Kept[0].Reason, "not yet rated") ||
		!out.Kept[0].End.After(periodStart) || out.Kept[0].Start.After(periodStart) {
		t.Fatalf("with an unrated period from %s: %+v", periodStart, out)
	}
	var unrated int
	if err := db.GetContext(ctx, &unrated, `SELECT count(*) FROM meter_events WHERE event_timestamp >= $1 AND event_timestamp < $2`,
		periodStart, now.Add(-retention)); err != nil || unrated != 3 {
		t.Fatalf("%d events of the unrated period left: %v", unrated, err)
	}

	// Rated (its period moved on): the old weeks go, the recent stay.
	if _, err := db.ExecContext(ctx, `UPDATE subscriptions SET current_period_start = $1 WHERE id = 'sub_ret'`, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if out, err = partitions.Drop(ctx, db, me, retention, now); err != nil {
		t.Fatal(err)
	}
	if len(out.Dropped) == 0 || len(out.Kept) != 0 {
		t.Fatalf("after rating: %+v", out)
	}
	left, err := partitions.List(ctx, db, "meter_events")
	if err != nil {
		t.Fatal(err)
	}
	if !left[0].End.After(now.Add(-retention)) {
		t.Fatalf("a partition ending %s is left, past the retention", left[0].End)
	}
	var old, recent int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE event_timestamp < $1), count(*) FILTER (WHERE event_timestamp >= $1)
		FROM meter_events`, now.Add(-retention)).Scan(&old, &recent); err != nil || old != 0 || recent != 1 {
		t.Fatalf("%d old events and %d recent left: %v", old, recent, err)
	}
	after := summary()
	if after.Value != before.Value {
		t.Fatalf("usage %s after the drop, %s before", after.Value, before.Value)
	}
	for i := range before.Windows {
		if before.Windows[i] != after.Windows[i] {
			t.Fatalf("window %d: %+v after, %+v before", i, after.Windows[i], before.Windows[i])
		}
	}
}

// withoutLegacyUsage drops the usage partition the migration made of the
// table before it, and the events in it.
func withoutLegacyUsage(t *testing.T, db *store.DB) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), `DROP TABLE meter_events_p00000000`); err != nil {
		t.Fatal(err)
	}
}

// Partitions exist from the oldest accepted backdate on, so events sent
// that late land in their week; events stamped by a test clock advanced
// past the weeks made ahead land in the default partition, and move into
// their week when the runner makes it.
func TestEnsureCoversBackdatesAndMovesClockedEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	s, _ := usageSetup(t, db, "mch_ens")
	now := time.Now().UTC()
	if made, err := partitions.Ensure(ctx, db, now); err != nil || len(made) != 0 {
		t.Fatalf("made %v at once after the migration: %v", made, err)
	}
	ingest(t, db, s, now, now.Add(-metering.MaxAge+time.Second))
	advanced := now.AddDate(1, 0, 0)
	ingest(t, db, s, advanced, advanced.Add(-time.Minute))
	where := func() []string {
		t.Helper()
		var parts []string
		if err := db.SelectContext(ctx, &parts, `SELECT tableoid::regclass::text FROM meter_events ORDER BY event_timestamp`); err != nil {
			t.Fatal(err)
		}
		return parts
	}
	me := partitions.MeterEvents()
	week := func(at time.Time) string { return "meter_events_p" + me.Start(at).Format("20060102") }
	// The backdated event is in the partition the migration made of the
	// table before it, which covers up to next week.
	if got := where(); len(got) != 2 || got[0] != "meter_events_p00000000" || got[1] != "meter_events_default" {
		t.Fatalf("events in %v", got)
	}
	withoutLegacyUsage(t, db)
	if made, err := partitions.Ensure(ctx, db, now); err != nil || len(made) < 6 {
		t.Fatalf("made %v in place of the first partition: %v", made, err)
	}
	ingest(t, db, s, now, now.Add(-metering.MaxAge+time.Second))
	if got := where(); len(got) != 2 || got[0] != week(now.Add(-metering.MaxAge)) {
		t.Fatalf("events in %v", got)
	}
	made, err := partitions.Ensure(ctx, db, advanced)
	if err != nil || len(made) < 5 {
		t.Fatalf("made %v: %v", made, err)
	}
	if got := where(); got[len(got)-1] != week(advanced) {
		t.Fatalf("events in %v after making %v", got, made)
	}
}

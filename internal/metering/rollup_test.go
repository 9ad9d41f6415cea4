package metering

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// exactUsage checks every reader of the buckets (the summary, Aggregate
// and AggregateMany) against the events themselves: per day of [from,
// to), and over a span with ragged ends.
func exactUsage(t *testing.T, db *store.DB, s tenant.Scope, cust string, meters map[string]Meter, from, to time.Time, when string) {
	t.Helper()
	ctx := context.Background()
	truth := func(agg string, f, t2 time.Time) string {
		var v string
		col := map[string]string{Sum: `coalesce(sum(value), 0)::text`, Count: `count(*)::text`, Max: `coalesce(max(value), 0)::text`,
			Last: `coalesce((array_agg(value ORDER BY event_timestamp DESC, id DESC))[1], 0)::text`}[agg]
		if err := db.GetContext(ctx, &v, `SELECT `+col+` FROM meter_events WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3
			AND meter_id = $4 AND cancelled_at IS NULL AND event_timestamp >= $5 AND event_timestamp < $6`,
			s.MerchantID, s.Mode, cust, meters[agg].ID, f, t2); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for agg, m := range meters {
		u, err := Usage(ctx, db, s, cust, UsageInput{Meter: m.Key, From: &from, To: &to, Window: Day}, to)
		if err != nil {
			t.Fatal(err)
		}
		var spans []Span
		for _, w := range u.Windows {
			if want := truth(agg, w.Start, w.End); w.Value != want {
				t.Errorf("%s, %s: summary's day %s holds %s, want %s", when, agg, w.Start.Format(time.DateOnly), w.Value, want)
			}
			spans = append(spans, Span{Scope: s, CustomerID: cust, MeterID: m.ID, From: w.Start, To: w.End})
		}
		ragged := [2]time.Time{from.Add(3*time.Hour + 17*time.Minute), to.Add(-5*time.Hour - 3*time.Minute)}
		spans = append(spans, Span{Scope: s, CustomerID: cust, MeterID: m.ID, From: ragged[0], To: ragged[1]})
		many, err := AggregateMany(ctx, db, spans)
		if err != nil {
			t.Fatal(err)
		}
		for i, sp := range spans {
			if got, want := many[i].Value(agg), truth(agg, sp.From, sp.To); got != want {
				t.Errorf("%s, %s: AggregateMany [%s, %s) holds %s, want %s", when, agg, sp.From, sp.To, got, want)
			}
		}
		a, err := Aggregate(ctx, db, s, m, cust, ragged[0], ragged[1])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.Value(agg), truth(agg, ragged[0], ragged[1]); got != want {
			t.Errorf("%s, %s: Aggregate holds %s, want %s", when, agg, got, want)
		}
	}
}

// Usage answers the same before and after days are rolled up, and stays
// exact as late events and cancels land in days already rolled up and in
// days not yet.
func TestRollUpKeepsUsageExact(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	day := time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)
	now := day.Add(12*time.Hour + 30*time.Minute)
	g := NewIngester()
	meters := map[string]Meter{}
	var evs []Event
	for _, agg := range []string{Sum, Count, Max, Last} {
		m, _, err := Create(ctx, db, s, Input{Key: "r_" + agg, DisplayName: agg, Aggregation: agg}, now.Add(-40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		meters[agg] = m
		for i := range 12 {
			at := day.Add(-3*24*time.Hour + time.Duration(i)*7*time.Hour + time.Duration(i)*time.Minute)
			evs = append(evs, ingestAt(t, g, db, s, m.Key, cust, int64(3+i*5%11), at, now))
		}
	}
	from, to := day.Add(-5*24*time.Hour), day.Add(2*24*time.Hour)
	exactUsage(t, db, s, cust, meters, from, to, "before any roll-up")
	if n, err := RollUp(ctx, db, now); err != nil || n != 1 {
		t.Fatalf("roll-up: %d scopes, %v", n, err)
	}
	var days []time.Time
	if err := db.SelectContext(ctx, &days, `SELECT DISTINCT start_at FROM usage_buckets WHERE merchant_id = $1 AND grain = 'day' ORDER BY 1`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(days) != 3 || !days[2].Equal(day.Add(-24*time.Hour)) {
		t.Errorf("day rows of %v, want the three days before %s", days, day)
	}
	exactUsage(t, db, s, cust, meters, from, to, "rolled up")
	if n, err := RollUp(ctx, db, now.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("a second roll-up the same day moved %d scopes, %v", n, err)
	}
	for agg, m := range meters {
		// Late events in a rolled-up day, at its start and end, and today.
		ingestAt(t, g, db, s, m.Key, cust, 40, day.Add(-2*24*time.Hour), now)
		ingestAt(t, g, db, s, m.Key, cust, 1, day.Add(-time.Microsecond), now)
		ingestAt(t, g, db, s, m.Key, cust, 6, day.Add(time.Hour), now)
		exactUsage(t, db, s, cust, meters, from, to, "late events of "+agg)
	}
	// Cancels in rolled-up days (the greatest and the latest value of a
	// day among them) and today.
	for _, i := range []int{1, 4, 5, 11, 13, 20, 22, 30, 35, 40, 47} {
		if _, err := Cancel(ctx, db, s, evs[i].ID, now); err != nil {
			t.Fatal(err)
		}
	}
	exactUsage(t, db, s, cust, meters, from, to, "cancels")
	// The next day rolls today up, with its late events and cancels.
	if n, err := RollUp(ctx, db, now.Add(24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("next day's roll-up: %d scopes, %v", n, err)
	}
	exactUsage(t, db, s, cust, meters, from, to, "today rolled up")
}

// A roll-up waits for the batches in flight in its scope, and counts
// them; a batch that arrives during a roll-up waits for it, then adds to
// the day rows of the days it rolled up. Either way round, a day read from
// its day rows holds every event.
func TestRollUpAndBatchesWaitForEachOther(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	day := time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)
	now := day.Add(12*time.Hour + 30*time.Minute)
	g := NewIngester()
	m, _, err := Create(ctx, db, s, Input{Key: "w_sum", DisplayName: "sum", Aggregation: Sum}, now.Add(-40*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	meters := map[string]Meter{Sum: m}
	ingestAt(t, g, db, s, m.Key, cust, 2, day.Add(-20*time.Hour), now)
	// holdTx runs fn in a transaction left open until release is closed.
	holdTx := func(fn func(tx *store.Tx) error) (started <-chan struct{}, release chan struct{}, done <-chan error) {
		st, rel, dn := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			dn <- db.InTx(ctx, func(tx *store.Tx) error {
				err := fn(tx)
				close(st)
				<-rel
				return err
			})
		}()
		return st, rel, dn
	}
	waits := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("%s did not wait (%v)", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}

	v, yesterday := int64(30), day.Add(-10*time.Hour)
	started, release, batch := holdTx(func(tx *store.Tx) error {
		res, err := g.IngestTx(ctx, tx, s, []EventInput{{EventName: m.Key, Value: &v, CustomerID: &cust, Timestamp: &yesterday}}, now)
		if err == nil {
			err = res[0].Err
		}
		return err
	})
	<-started
	rolled := make(chan error, 1)
	go func() { _, err := RollUp(ctx, db, now); rolled <- err }()
	waits("the roll-up", rolled)
	close(release)
	if err := <-batch; err != nil {
		t.Fatal(err)
	}
	if err := <-rolled; err != nil {
		t.Fatal(err)
	}
	exactUsage(t, db, s, cust, meters, day.Add(-2*24*time.Hour), day.Add(24*time.Hour), "batch before the roll-up")

	started, release, rolling := holdTx(func(tx *store.Tx) error {
		_, err := rollUpScope(ctx, tx, s, day.Add(24*time.Hour))
		return err
	})
	<-started
	ingested := make(chan error, 1)
	go func() {
		at := day.Add(2 * time.Hour)
		res, err := g.Ingest(ctx, db, s, []EventInput{{EventName: m.Key, Value: &v, CustomerID: &cust, Timestamp: &at}}, now)
		if err == nil {
			err = res[0].Err
		}
		ingested <- err
	}()
	waits("the batch", ingested)
	close(release)
	if err := <-rolling; err != nil {
		t.Fatal(err)
	}
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
	exactUsage(t, db, s, cust, meters, day.Add(-2*24*time.Hour), day.Add(24*time.Hour), "batch during the roll-up")
}

// The roll-up's statements and the readers' keep to one merchant per
// statement (a rule of distributing by merchant_id), as the daemon's
// recorded statements are checked.
func TestRollUpStatementsStayOnOneMerchant(t *testing.T) {
	db := testdb.Open(t)
	tables := testdb.DistributedTables(t, db)
	for name, q := range map[string]string{"due": rollupDueSQL, "drop": rollupDropSQL, "rollup": rollupSQL, "move": rollupMoveSQL,
		"many": manySQL(true), "once": usageOnceRawSQL, "spans": spansSQL(Sum, true), "rebuild day": rebuildDaySQL, "write": writeSQL} {
		if why := testdb.Violation(q, tables); why != "" {
			t.Errorf("%s: %s", name, why)
		}
	}
}

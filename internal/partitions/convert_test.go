package partitions_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// lastUnpartitioned is the last migration before the partitioned tables.
const lastUnpartitioned = 63

// migrate brings the database at url to version last (all: 1 << 30).
func migrate(t *testing.T, url string, last int) {
	t.Helper()
	raw, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := store.MigrateTo(context.Background(), raw, last); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func ptr[T any](v T) *T { return &v }

// withoutLegacy drops the partitions the migrations made of the tables as
// they stood (empty in a new database: they cover every time before next
// week and month), and makes the periods around now in their place, so a
// test can lay out old periods of its own.
func withoutLegacy(t *testing.T, db *store.DB, now time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"meter_events_p00000000", "events_p00000000"} {
		var empty bool
		if err := db.GetContext(ctx, &empty, `SELECT NOT EXISTS (SELECT 1 FROM `+name+`)`); err != nil || !empty {
			t.Fatalf("%s: empty %v, %v", name, empty, err)
		}
		if _, err := db.ExecContext(ctx, `DROP TABLE `+name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := partitions.Ensure(ctx, db, now); err != nil {
		t.Fatal(err)
	}
}

// The migrations convert a database holding data written before them, in
// place: usage (with a cancelled event and idempotency keys), the feed
// (with deliveries pending and done) are all still there and served after.
func TestMigrationConvertsDataInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Blank(t)
	migrate(t, url, lastUnpartitioned)
	db := open(t, url)
	s := tenant.Scope{MerchantID: "mch_conv", Mode: tenant.Test}
	if _, err := db.ExecContext(ctx, `INSERT INTO merchants (id, name) VALUES ($1, 'conv')`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	// Today's code on the schema of then, writing as the code of then did:
	// day buckets in every batch (every day counts as rolled up). Migration
	// 076 makes the real table. Deliveries did not record their event's
	// time (077 adds it): the column is dropped again before migrating, so
	// the delivery left pending is claimed as one made then.
	for _, q := range []string{`CREATE TABLE usage_rollups (merchant_id text, mode text, through timestamptz, PRIMARY KEY (merchant_id, mode))`,
		`INSERT INTO usage_rollups VALUES ('mch_conv', 'test', 'infinity')`,
		`ALTER TABLE webhook_deliveries ADD COLUMN event_created_at timestamptz`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	m, _, err := metering.Create(ctx, db, s, metering.Input{Key: "calls", DisplayName: "Calls"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Hour)
	// Events over the last 30 days (six weeks), one an hour apart each day.
	var ins []metering.EventInput
	for d := range 30 {
		ins = append(ins, metering.EventInput{EventName: "calls", Value: ptr(int64(d + 1)), ExternalCustomerID: ptr("cus-ext"),
			Timestamp: ptr(now.Add(-time.Duration(d)*24*time.Hour - time.Hour)), IdempotencyKey: ptr("k" + string(rune('a'+d)))})
	}
	g := metering.NewIngester()
	res, err := g.Ingest(ctx, db, s, ins, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	customer := *res[0].Event.CustomerID
	if _, err := metering.Cancel(ctx, db, s, res[2].Event.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	from, to := now.Add(-40*24*time.Hour), now
	usageBefore, err := metering.Usage(ctx, db, s, customer, metering.UsageInput{Meter: m.ID, From: &from, To: &to, Window: metering.Day}, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	// The feed: twelve events, a delivery each to one endpoint, all
	// delivered but the last, which is pending.
	rc := webhookstest.NewReceiver(t, nil)
	webhookstest.Endpoint(t, db, s.MerchantID, rc.URL)
	var evs []events.Event
	for range 12 {
		evs = append(evs, webhookstest.Emit(t, db, s, "invoice.created", map[string]any{"n": len(evs)}))
	}
	if _, err := db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'succeeded', attempts = 1 WHERE event_id <> $1`, evs[11].ID); err != nil {
		t.Fatal(err)
	}
	feedBefore := feed(t, db, s)
	if _, err := db.ExecContext(ctx, `DROP TABLE usage_rollups; ALTER TABLE webhook_deliveries DROP COLUMN event_created_at`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	migrate(t, url, 1<<30)
	db = open(t, url)
	var kinds []string
	if err := db.SelectContext(ctx, &kinds, `SELECT c.relname FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[0] != "events" || kinds[1] != "meter_events" {
		t.Fatalf("partitioned tables %v", kinds)
	}

	// The rows stored before are one partition, attached, not copied.
	var legacy int
	if err := db.GetContext(ctx, &legacy, `SELECT count(*) FROM meter_events_p00000000`); err != nil || legacy != 30 {
		t.Fatalf("%d events in the partition of the old table: %v", legacy, err)
	}
	// Day buckets were complete: the days before today are read from them.
	var through time.Time
	if err := db.GetContext(ctx, &through, `SELECT through FROM usage_rollups WHERE merchant_id = $1 AND mode = $2`, s.MerchantID, s.Mode); err != nil ||
		!through.Equal(time.Now().UTC().Truncate(24*time.Hour)) {
		t.Fatalf("days rolled up through %s: %v", through, err)
	}
	usageAfter, err := metering.Usage(ctx, db, s, customer, metering.UsageInput{Meter: m.ID, From: &from, To: &to, Window: metering.Day}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if usageAfter.Value != usageBefore.Value || usageAfter.Value != "462" { // 1..30 less the cancelled 3
		t.Fatalf("usage %s before, %s after", usageBefore.Value, usageAfter.Value)
	}
	for i := range usageBefore.Windows {
		if usageBefore.Windows[i] != usageAfter.Windows[i] {
			t.Fatalf("window %d: %+v before, %+v after", i, usageBefore.Windows[i], usageAfter.Windows[i])
		}
	}
	var stored, cancelled int
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(cancelled_at) FROM meter_events`).Scan(&stored, &cancelled); err != nil || stored != 30 || cancelled != 1 {
		t.Fatalf("%d events, %d cancelled: %v", stored, cancelled, err)
	}
	got, err := metering.Cancel(ctx, db, s, res[2].Event.ID, time.Now())
	if err != nil || got.CancelledAt == nil {
		t.Fatalf("the cancelled event by id: %+v, %v", got, err)
	}
	// A repeated event is deduplicated against a key stored before.
	again, err := g.Ingest(ctx, db, s, ins[5:6], time.Now())
	if err != nil || again[0].Err != nil || !again[0].Event.Deduplicated || again[0].Event.ID != res[5].Event.ID {
		t.Fatalf("replay: %+v, %v", again, err)
	}

	feedAfter := feed(t, db, s)
	if len(feedAfter) != len(feedBefore) {
		t.Fatalf("feed of %d, was %d", len(feedAfter), len(feedBefore))
	}
	for i := range feedBefore {
		if feedAfter[i] != feedBefore[i] {
			t.Fatalf("feed[%d] %s, was %s", i, feedAfter[i], feedBefore[i])
		}
	}
	if ev, err := events.Get(ctx, db, s, evs[3].ID); err != nil || ev.Seq != evs[3].Seq {
		t.Fatalf("event by id: %+v, %v", ev, err)
	}
	// New events continue the sequence.
	next := webhookstest.Emit(t, db, s, "invoice.created", map[string]any{})
	if next.Seq <= evs[11].Seq {
		t.Fatalf("seq %d after %d", next.Seq, evs[11].Seq)
	}

	// The delivery pending before is claimed and delivered after.
	jobs, err := webhooks.Claim(ctx, db, 10, nil, func(eps []string) map[string]int {
		out := map[string]int{}
		for _, e := range eps {
			out[e] = 10
		}
		return out
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var pending *webhooks.Job
	for i := range jobs {
		if jobs[i].EventID == evs[11].ID {
			pending = &jobs[i]
		}
	}
	if pending == nil || pending.Event.Type != "invoice.created" {
		t.Fatalf("claimed %+v", jobs)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		return webhooks.Record(ctx, tx, []webhooks.Answer{{Job: *pending, Result: webhooks.Result{StartedAt: time.Now(), Status: 200}}}, []time.Duration{time.Minute})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds := webhookstest.Deliveries(t, db, evs[11].ID); len(ds) != 1 || ds[0].Status != webhooks.StatusSucceeded {
		t.Fatalf("deliveries %+v", ds)
	}
}

// feed walks the scope's whole feed, five events a page, and returns the
// ids in order.
func feed(t *testing.T, db *store.DB, s tenant.Scope) []string {
	t.Helper()
	var ids []string
	p := page.Params{Limit: 5}
	for {
		r, err := events.List(context.Background(), db, s, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Items {
			ids = append(ids, e.ID)
		}
		if !r.HasMore {
			return ids
		}
		p.Before = r.Next
	}
}

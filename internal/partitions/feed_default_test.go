package partitions_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A job runner stopped past the months it made ahead does not stop the
// feed: an event written then lands in the default partition, stays
// readable, and moves into its month when the runner makes the month.
// Retention never drops the default.
func TestFeedWritesPastTheMonthsMadeAheadLandInTheDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	now := time.Now().UTC()
	withoutLegacy(t, db, now)
	// The runner stopped long enough that no month covers now: every
	// month it made (all empty) is gone.
	ps, err := partitions.List(ctx, db, "events")
	if err != nil || len(ps) == 0 {
		t.Fatalf("months %v: %v", ps, err)
	}
	for _, p := range ps {
		if _, err := db.ExecContext(ctx, `DROP TABLE `+p.Name); err != nil {
			t.Fatal(err)
		}
	}
	s := tenant.Scope{MerchantID: "mch_feed", Mode: tenant.Live}
	var ev events.Event
	err = db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ev, err = events.Emit(ctx, tx, s, "invoice.created", now, map[string]string{"id": "in_1"})
		return err
	})
	if err != nil {
		t.Fatalf("event written past the months made: %v", err)
	}
	where := func() string {
		t.Helper()
		var name string
		if err := db.GetContext(ctx, &name, `SELECT tableoid::regclass::text FROM events WHERE merchant_id = $1 AND id = $2`, s.MerchantID, ev.ID); err != nil {
			t.Fatal(err)
		}
		return name
	}
	if got := where(); got != "events_default" {
		t.Fatalf("event in %s, want events_default", got)
	}
	if got, err := events.Get(ctx, db, s, ev.ID); err != nil || got.ID != ev.ID {
		t.Fatalf("get from the default: %+v, %v", got, err)
	}

	made, err := partitions.Ensure(ctx, db, now)
	if err != nil || len(made) < 3 {
		t.Fatalf("made %v: %v", made, err)
	}
	month := "events_p" + partitions.Events().Start(now).Format("20060102")
	if got := where(); got != month {
		t.Fatalf("event in %s after making %v, want %s", got, made, month)
	}
	var left int
	if err := db.GetContext(ctx, &left, `SELECT count(*) FROM events_default`); err != nil || left != 0 {
		t.Fatalf("%d rows left in the default: %v", left, err)
	}
	feed, err := events.List(ctx, db, s, page.Params{Limit: 10})
	if err != nil || len(feed.Items) != 1 || feed.Items[0].ID != ev.ID {
		t.Fatalf("feed after the move: %+v, %v", feed.Items, err)
	}

	// Retention, with every month past it, drops the months and keeps the
	// default.
	out, err := partitions.Drop(ctx, db, partitions.Events(), time.Hour, now.AddDate(1, 0, 0))
	if err != nil || len(out.Dropped) != len(made) {
		t.Fatalf("dropped %v of %v: %v", out, made, err)
	}
	var exists bool
	if err := db.GetContext(ctx, &exists, `SELECT to_regclass('events_default') IS NOT NULL`); err != nil || !exists {
		t.Fatalf("default partition kept: %v, %v", exists, err)
	}
}

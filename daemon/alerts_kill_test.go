package daemon_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A daemon killed with SIGKILL after the request that crossed an alert's
// threshold was answered, while its alert job held the firing uncommitted
// (the test holds a lock the job's insert waits on): no event is lost or
// doubled, the next daemon fires it, exactly once.
func TestAlertSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tollgate binary")
	}
	t.Parallel()
	ctx := context.Background()
	dbURL := testdb.New(t)
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &bundle{t: t, db: db}
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	bin := tollgateBinary(t)
	p, addr := serveProcessURL(t, bin, dbURL, "--rate-limits=false")
	c := client.New(addr, key, client.WithMaxRetries(0))
	meter, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: meter.ID, Threshold: "3"}); err != nil {
		t.Fatal(err)
	}
	// Firings wait on this lock, so the kill falls between the crossing
	// and its event.
	hold, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }()
	if _, err := hold.Exec(`LOCK TABLE alert_firings IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_1"}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the alert job waiting to fire", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%alert_firings%' AND pid <> pg_backend_pid()`)
		return n > 0
	})
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The killed daemon's transaction never commits.
	eventually(t, 30*time.Second, "the killed daemon's session gone", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%alert_firings%' AND pid <> pg_backend_pid() AND state <> 'idle'`)
		return n == 0
	})
	if trs := triggersOf(t, db, m); len(trs) != 0 {
		t.Fatalf("fired before the kill: %+v", trs)
	}
	serveProcessURL(t, bin, dbURL, "--rate-limits=false")
	eventually(t, 30*time.Second, "alert.triggered after the restart", func() bool { return len(triggersOf(t, db, m)) > 0 })
	checked(t, db)
	var firings int
	if err := db.Get(&firings, `SELECT count(*) FROM alert_firings`); err != nil {
		t.Fatal(err)
	}
	if trs := triggersOf(t, db, m); len(trs) != 1 || trs[0].Value != "3" || firings != 1 {
		t.Fatalf("after the restart: %d firings, triggers %+v", firings, trs)
	}
}

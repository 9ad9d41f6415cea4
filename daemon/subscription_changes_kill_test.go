package daemon_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A daemon killed with SIGKILL after the rail charged an upgrade's
// proration and before the change committed (the test holds a lock the
// payment's insert waits on): nothing of the change remains, the rail's
// ledger included, and the retry with the same Idempotency-Key on the next
// daemon makes it exactly once, with one settlement and one payment.
func TestPlanChangeSurvivesKill9(t *testing.T) {
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
	pro, err := c.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	basic, err := c.CreatePlan(ctx, client.PlanParams{Name: "Basic", Amount: "10000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Pay(ctx, pro.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1"})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Subscription
	if _, err := c.AdvanceTestClock(ctx, client.TestClockAdvanceParams{By: "3d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeSubscription(ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	hold, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }()
	if _, err := hold.Exec(`LOCK TABLE payments IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	upgrade := client.ChangeParams{Plan: pro.ID, At: "now"}
	go func() { _, _ = c.ChangeSubscription(ctx, x.ID, upgrade, client.IdempotencyKey("upgrade-1")) }()
	eventually(t, 30*time.Second, "the change waiting to record its payment, its charge made", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO payments%' AND pid <> pg_backend_pid()`)
		return n > 0
	})
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the killed daemon's session gone", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%INSERT INTO payments%' AND pid <> pg_backend_pid() AND state <> 'idle'`)
		return n == 0
	})
	// Not at all: no settlement, no payment, the plan as it was.
	counts := func() (settled, paid int, plan string) {
		t.Helper()
		if err := db.Get(&settled, `SELECT count(*) FROM rail_settlements WHERE key LIKE 'chg:%:change:%'`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&paid, `SELECT count(*) FROM payments WHERE lines::text LIKE '%proration%'`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&plan, `SELECT plan_id FROM subscriptions WHERE id = $1`, x.ID); err != nil {
			t.Fatal(err)
		}
		return settled, paid, plan
	}
	if s, pd, plan := counts(); s != 0 || pd != 0 || plan != basic.ID {
		t.Fatalf("after the kill: %d settlements, %d payments, plan %s", s, pd, plan)
	}
	_, addr = serveProcessURL(t, bin, dbURL, "--rate-limits=false")
	c = client.New(addr, key, client.WithMaxRetries(0))
	for range 2 { // the retry, and a retry of the retry
		got, err := c.ChangeSubscription(ctx, x.ID, upgrade, client.IdempotencyKey("upgrade-1"))
		if err != nil || got.PlanID != pro.ID {
			t.Fatalf("retry: %v", err)
		}
	}
	if s, pd, plan := counts(); s != 1 || pd != 1 || plan != pro.ID {
		t.Fatalf("after the retries: %d settlements, %d payments, plan %s", s, pd, plan)
	}
}

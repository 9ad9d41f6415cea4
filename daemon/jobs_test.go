package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// Two daemons on one database run the background jobs between them: every
// due credit expiry is written once, by one run of the job per period, and
// the first run of every periodic job is claimed by one daemon only.
func TestTwoDaemonsRunEachDueJobOnce(t *testing.T) {
	t.Parallel()
	url := testdb.New(t)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, db: db}
	m := b.merchant("acme")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	ctx := context.Background()
	// Granted in the past, already due, before either daemon starts:
	// whichever run comes first has them all to do. (Granted after a
	// start, the first run could come before them and the next a minute
	// later.)
	now := time.Now().Add(-2 * time.Second)
	expires := now.Add(time.Second)
	const grants = 30
	for i := range grants {
		ext := fmt.Sprintf("u%d", i)
		if _, err := credits.Grant(ctx, b.db, s, credits.GrantInput{Customer: customers.Ref{ExternalID: &ext}, Amount: 10, ExpiresAt: &expires}, now); err != nil {
			t.Fatal(err)
		}
	}
	startDaemon(t, db, url)
	startDaemon(t, db, url)
	count := func(q string) int {
		var n int
		if err := b.db.Get(&n, q); err != nil {
			t.Fatal(err)
		}
		return n
	}
	eventually(t, 30*time.Second, "every grant expired by the job", func() bool {
		return count(`SELECT count(*) FROM credit_entries WHERE kind = 'expiry'`) == grants
	})
	// The credit-expiry job's first run came after its one-second delay;
	// one claim per period, whichever daemon made it.
	elapsed := time.Since(now)
	if runs := count(`SELECT runs FROM job_schedule WHERE name = 'credit-expiry'`); runs < 1 || time.Duration(runs-1)*time.Minute > elapsed {
		t.Fatalf("credit-expiry ran %d times in %v", runs, elapsed)
	}
	if n := count(`SELECT count(*) FROM credit_entries WHERE kind = 'expiry'`); n != grants {
		t.Fatalf("%d expiry entries for %d grants", n, grants)
	}
}

// A running daemon analyses a table that was written before it ever had
// statistics, without waiting for autovacuum (kept off the table here so
// that only the daemon can).
func TestDaemonAnalyzesFreshTables(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	if _, err := b.db.Exec(`ALTER TABLE customers SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Exec(`INSERT INTO customers (merchant_id, mode, id, external_customer_id)
		SELECT $1, 'test', 'cus_fresh' || i, 'fresh' || i FROM generate_series(1, 600) i`, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "customers analysed by the daemon", func() bool {
		var done bool
		if err := b.db.Get(&done, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'customers'`); err != nil {
			t.Fatal(err)
		}
		return done
	})
}

package credits_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A debit that leaves something of its grant updates the remainder and the
// account in place (HOT): no index depends on a column it changes. One that
// uses the grant up takes it out of the partial indexes, so readers no
// longer see it.
func TestDebitUpdatesInPlace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	soon := t0.Add(time.Hour)
	f.mustGrant(cus, 100, &soon, t0)
	type counts struct {
		Updated int `db:"updated"`
		HOT     int `db:"hot"`
	}
	// The transaction's own counters: no wait for the statistics collector.
	stats := func(tx *store.Tx, table string) counts {
		var c counts
		if err := tx.GetContext(f.ctx, &c, `SELECT pg_stat_get_xact_tuples_updated($1::regclass) AS updated,
			pg_stat_get_xact_tuples_hot_updated($1::regclass) AS hot`, table); err != nil {
			t.Fatal(err)
		}
		return c
	}
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		if _, err := credits.DebitTx(f.ctx, tx, f.s, credits.DebitInput{Customer: ref(cus), Amount: 30}, t0); err != nil {
			return err
		}
		for _, table := range []string{"credit_grant_balances", "credit_accounts"} {
			if c := stats(tx, table); c.Updated != 1 || c.HOT != 1 {
				t.Errorf("%s: %d updates, %d in place; want 1 and 1", table, c.Updated, c.HOT)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.debit(credits.DebitInput{Customer: ref(cus), Amount: 70}, t0); err != nil {
		t.Fatal(err)
	}
	var live int
	if err := f.db.Get(&live, `SELECT count(*) FROM credit_grant_balances WHERE live`); err != nil {
		t.Fatal(err)
	}
	if live != 0 {
		t.Fatalf("%d live remainders after the grant was used up; want 0", live)
	}
	if _, err := credits.SweepExpired(f.ctx, f.db, soon.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if b := f.balance(cus, soon.Add(time.Minute)); b.Balance != 0 || b.Expired != 0 {
		t.Fatalf("balance %+v", b)
	}
	checkInvariants(t, f, t0)
}

// The migration converts a database holding remainders: each gets live
// from its remainder, and the partial indexes are rebuilt on it.
func TestMigrationMarksLiveRemainders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Blank(t)
	raw, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := store.MigrateTo(ctx, raw, 77); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO credit_grant_balances (merchant_id, mode, grant_id, account_id, amount, remaining, expires_at, seq)
		VALUES ('mer_1', 'test', 'cent_left', 'cacct_1', 10, 4, now() + interval '1 day', 1),
			('mer_1', 'test', 'cent_spent', 'cacct_1', 10, 0, now() + interval '1 day', 2)`); err != nil {
		t.Fatal(err)
	}
	if err := store.MigrateTo(ctx, raw, 1<<30); err != nil {
		t.Fatal(err)
	}
	var live string
	if err := raw.QueryRowContext(ctx, `SELECT string_agg(grant_id, ',' ORDER BY grant_id) FROM credit_grant_balances WHERE live`).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != "cent_left" {
		t.Fatalf("live remainders %q; want cent_left", live)
	}
	var onRemaining int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'credit_grant_balances'
		AND indexdef LIKE '%remaining%'`).Scan(&onRemaining); err != nil {
		t.Fatal(err)
	}
	if onRemaining != 0 {
		t.Fatalf("%d indexes of credit_grant_balances still depend on remaining", onRemaining)
	}
}

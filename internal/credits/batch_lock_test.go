package credits_test

import (
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/store"
)

// holdAndChange runs change in a transaction that holds cus's account
// lock, then, before committing, starts batch and waits until it is
// blocked on a lock (its statement's snapshot is then older than the
// commit); it returns batch's error once it is done.
func holdAndChange(t *testing.T, f *fixture, cus string, change func(tx *store.Tx) error, batch func() error) error {
	t.Helper()
	done := make(chan error, 1)
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		go func() { done <- batch() }()
		waitFor(t, func() bool {
			var n int
			if err := f.db.Get(&n, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
				t.Fatal(err)
			}
			return n > 0
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the batch did not finish after the lock was let go")
		return nil
	}
}

// A batch whose lock waited for a transaction that drew on the account's
// grants and added one draws on the remainders that transaction left,
// not on those its lock statement's snapshot held (which it reads in the
// same statement): on stale ones it would draw 30 from a grant already
// spent, and the remainders would no longer add up to the balance.
func TestBatchLockWaitedRereadsRemainders(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	soon, later := t0.Add(time.Hour), t0.Add(2*time.Hour)
	first := f.mustGrant(cus, 100, &soon, t0)
	var second credits.GrantResult
	var res credits.DebitResult
	err := holdAndChange(t, f, cus, func(tx *store.Tx) error {
		if _, err := credits.DebitTx(f.ctx, tx, f.s, credits.DebitInput{Customer: ref(cus), Amount: 100}, t0); err != nil {
			return err
		}
		var err error
		second, err = credits.GrantTx(f.ctx, tx, f.s, credits.GrantInput{Customer: ref(cus), Amount: 50, ExpiresAt: &later}, t0)
		return err
	}, func() error {
		var err error
		res, err = f.debit(credits.DebitInput{Customer: ref(cus), Amount: 30}, t0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Covered != 30 || res.Balance != 20 {
		t.Fatalf("debit after the wait: %+v", res)
	}
	var left []struct {
		GrantID   string `db:"grant_id"`
		Remaining int64  `db:"remaining"`
	}
	if err := f.db.Select(&left, `SELECT grant_id, remaining FROM credit_grant_balances ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].GrantID != first.EntryID || left[0].Remaining != 0 || left[1].GrantID != second.EntryID || left[1].Remaining != 20 {
		t.Fatalf("remainders %+v; want %s at 0 and %s at 20", left, first.EntryID, second.EntryID)
	}
	checkInvariants(t, f, t0)
}

// A batch whose lock waited for a transaction that stored the operation
// of its idempotency key replays it.
func TestBatchLockWaitedReplaysKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	f.mustGrant(cus, 100, nil, t0)
	in := credits.DebitInput{Customer: ref(cus), Amount: 40, IdempotencyKey: ptr("k")}
	var stored, res credits.DebitResult
	err := holdAndChange(t, f, cus, func(tx *store.Tx) error {
		var err error
		stored, err = credits.DebitTx(f.ctx, tx, f.s, in, t0)
		return err
	}, func() error {
		var err error
		res, err = f.debit(in, t0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Deduplicated || res.Covered != stored.Covered || stored.Deduplicated || res.Balance != 60 {
		t.Fatalf("replay after the wait: %+v; stored %+v", res, stored)
	}
	if b := f.balance(cus, t0); b.Balance != 60 {
		t.Fatalf("balance %+v", b)
	}
	checkInvariants(t, f, t0)
}

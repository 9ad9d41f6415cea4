package credits_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
)

// 200 concurrent debits on one account without allow_negative: none
// overdraws, the balance ends at the grants minus what was covered, and
// each applied debit has exactly one credit.debited whose data is its
// result's wire form (the REST response).
func TestBatchHotAccount(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("hot")
	exp := t0.Add(time.Hour)
	f.mustGrant(cus, 1500, &exp, t0)
	f.mustGrant(cus, 1000, nil, t0)
	const n = 200
	results := make([]credits.DebitResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.debit(credits.DebitInput{Customer: ref(cus), Amount: money.Amount(1 + i%25)}, t0)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	var covered money.Amount
	var want []string
	for _, r := range results {
		if r.Balance < 0 || r.Covered+r.Shortfall != r.Requested {
			t.Fatalf("debit %+v", r)
		}
		covered += r.Covered
		want = append(want, canonical(t, r.Wire()))
	}
	if b := f.balance(cus, t0); b.Balance != 2500-covered || b.Consumed != covered || covered > 2500 {
		t.Fatalf("balance %+v, covered %d", b, covered)
	}
	got := eventData(t, f, "credit.debited")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d events for %d debits, or data differs", len(got), len(want))
	}
	if n := f.b.Fallbacks(); n != 0 {
		t.Errorf("%d batches fell back", n)
	}
	checkInvariants(t, f, t0)
}

// eventData returns the data of the scope's events of type typ.
func eventData(t *testing.T, f *fixture, typ string) []string {
	t.Helper()
	var raw [][]byte
	if err := f.db.Select(&raw, `SELECT data FROM events WHERE merchant_id = $1 AND type = $2 ORDER BY seq`, f.s.MerchantID, typ); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		out[i] = canonical(t, json.RawMessage(r))
	}
	return out
}

// canonical is v as JSON with sorted keys (jsonb reorders them).
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(m)
	return string(b)
}

// A batch whose transaction fails on an SQL error is applied one by one:
// every caller gets what it would have, nothing is lost or doubled. A
// deadlock is retried as a batch.
func TestBatchFallback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		stmt      string
		fallbacks int64
	}{
		{"sql error", `SELECT 1 / 0`, 1},
		{"deadlock", `DO $$ BEGIN RAISE EXCEPTION 'test deadlock' USING ERRCODE = '40P01'; END $$`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			var failed atomic.Bool
			f.b.SetFault(func(ctx context.Context, tx *store.Tx, step string) error {
				if step != "write" || !failed.CompareAndSwap(false, true) {
					return nil
				}
				_, err := tx.ExecContext(ctx, c.stmt)
				return err
			})
			got := f.runQueued(mixedCalls(f))
			if n := f.b.Fallbacks(); n != c.fallbacks || !failed.Load() {
				t.Fatalf("%d fallbacks, fault ran: %v", n, failed.Load())
			}
			one := setup(t)
			for i, call := range mixedCalls(one) {
				g, d, err := one.do(call, false)
				if want := one.comparable(g, d, err); !equalResults(got[i], want) {
					t.Errorf("call %d:\n got %+v\nwant %+v", i, got[i], want)
				}
			}
			checkInvariants(t, f, t0.Add(time.Hour))
			checkEvents(t, f, got)
		})
	}
}

func equalResults(a, b result) bool { return a == b }

// An idempotency key another transaction takes while the batch runs (as
// another replica would) fails the batch, which is then applied one by one:
// the item sees the other's operation.
func TestBatchConcurrentKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, b := f.customer("a"), f.customer("b")
	f.mustGrant(a, 100, nil, t0)
	f.mustGrant(b, 100, nil, t0)
	var once atomic.Bool
	f.b.SetFault(func(ctx context.Context, tx *store.Tx, step string) error {
		if step == "write" && once.CompareAndSwap(false, true) {
			// Another account, so it does not wait for the batch's lock.
			_, err := credits.Debit(ctx, f.db, f.s, credits.DebitInput{Customer: ref(b), Amount: 5, IdempotencyKey: ptr("k")}, t0)
			return err
		}
		return nil
	})
	_, err := f.debit(credits.DebitInput{Customer: ref(a), Amount: 5, IdempotencyKey: ptr("k")}, t0)
	wantCode(t, err, apperr.InvalidRequest, "idempotency_key:")
	if n := f.b.Fallbacks(); n != 1 {
		t.Fatalf("%d fallbacks", n)
	}
	if ba, bb := f.balance(a, t0), f.balance(b, t0); ba.Balance != 100 || bb.Balance != 95 {
		t.Fatalf("balances %d %d", ba.Balance, bb.Balance)
	}
	checkInvariants(t, f, t0)
}

// A caller whose context ends before its item is taken withdraws it:
// nothing is applied.
func TestBatchCancelledBeforeTaken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	f.mustGrant(cus, 100, nil, t0)
	f.b.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.b.Debit(ctx, f.s, credits.DebitInput{Customer: ref(cus), Amount: 10}, t0)
		done <- err
	}()
	waitFor(t, func() bool { return f.b.Queued() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	waitFor(t, func() bool { return f.b.Queued() == 0 })
	f.b.Resume()
	// The next call is applied alone, on the untouched balance.
	if d := f.mustDebit(cus, 1, false, t0); d.Balance != 99 {
		t.Fatalf("debit %+v", d)
	}
}

// Calls that come while a batch takes its locks wait for them to be held
// and are then taken together, not each by a committer of its own: under
// load the calls of a burst otherwise became batches of one.
func TestBatchTakesCallsAtTheCommit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := []string{f.customer("a"), f.customer("b"), f.customer("c"), f.customer("d")}
	for _, c := range cus {
		f.mustGrant(c, 100, nil, t0)
	}
	ch := make(chan struct{})
	release := sync.OnceFunc(func() { close(ch) })
	t.Cleanup(release) // before the batcher closes, should the test fail
	var batches atomic.Int64
	var held atomic.Bool
	f.b.SetFault(func(ctx context.Context, tx *store.Tx, step string) error {
		if step != "lock" {
			return nil
		}
		batches.Add(1)
		if held.CompareAndSwap(false, true) {
			<-ch
		}
		return nil
	})
	debit := func(c string) {
		if _, err := f.debit(credits.DebitInput{Customer: ref(c), Amount: 1}, t0); err != nil {
			t.Error(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { debit(cus[0]) })
	waitFor(t, held.Load)
	for _, c := range cus[1:] {
		wg.Go(func() { debit(c) })
	}
	// Another committer would have taken the first of them at once.
	waitFor(t, func() bool { return f.b.Queued() == len(cus)-1 })
	release()
	wg.Wait()
	if n := batches.Load(); n != 2 {
		t.Fatalf("%d batches, want the first and one of the other %d calls", n, len(cus)-1)
	}
	checkInvariants(t, f, t0)
}

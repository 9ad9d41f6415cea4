package credits_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
)

// 60 debits of 10 race for a balance of 500: exactly 500 is covered, the
// balance ends at 0 and never below, and every debit is counted.
func TestConcurrentDebits(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	exp := t0.Add(time.Hour)
	f.mustGrant(cus, 300, &exp, t0)
	f.mustGrant(cus, 200, nil, t0)
	const n = 60
	results := make([]credits.DebitResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.debit(credits.DebitInput{Customer: ref(cus), Amount: 10}, t0)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	var covered, short money.Amount
	for _, r := range results {
		if r.Balance < 0 {
			t.Fatalf("overdrawn: %+v", r)
		}
		covered += r.Covered
		short += r.Shortfall
	}
	if covered != 500 || short != 100 {
		t.Fatalf("covered %d shortfall %d", covered, short)
	}
	if b := f.balance(cus, t0); b.Balance != 0 || b.Consumed != 500 {
		t.Fatalf("balance %+v", b)
	}
	checkInvariants(t, f, t0)
}

// One idempotency key sent 20 times at once applies once; the others get
// the same result marked deduplicated.
func TestConcurrentReplays(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	const n = 20
	grants := make([]credits.GrantResult, n)
	debits := make([]credits.DebitResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			grants[i], err = f.grant(credits.GrantInput{Customer: ref(cus), Amount: 100, IdempotencyKey: ptr("g")}, t0)
			if err != nil {
				t.Error(err)
				return
			}
			debits[i], err = f.debit(credits.DebitInput{Customer: ref(cus), Amount: 30, IdempotencyKey: ptr("d")}, t0)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if !grants[i].Deduplicated {
			fresh++
		}
		if grants[i].EntryID != grants[0].EntryID || debits[i].Balance != 70 {
			t.Fatalf("results differ: %+v %+v", grants[i], debits[i])
		}
	}
	if fresh != 1 {
		t.Fatalf("%d grants applied", fresh)
	}
	if b := f.balance(cus, t0); b.Balance != 70 || b.Granted != 100 || b.Consumed != 30 {
		t.Fatalf("balance %+v", b)
	}
	checkInvariants(t, f, t0)
}

// The same key for different customers at once: one wins, the others are
// told the key was used with other parameters; nothing is half-written.
func TestConcurrentKeyAcrossAccounts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 10
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.customer(string(rune('a' + i)))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.grant(credits.GrantInput{Customer: ref(ids[i]), Amount: 5, IdempotencyKey: ptr("k")}, t0)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	var ops int
	if err := f.db.Get(&ops, `SELECT count(*) FROM credit_operations`); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || ops != 1 {
		t.Fatalf("%d succeeded, %d operations: %v", ok, ops, errs)
	}
	checkInvariants(t, f, t0)
}

package credits_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
)

// checkInvariants proves the projections equal what the ledger says, for
// every account in the database: balance = sum of entries, granted and
// consumed = sums of grant and debit entries, each grant's remainder =
// amount - settled + its draws, and the remainders minus debt = balance.
func checkInvariants(t testing.TB, f *fixture, now time.Time) {
	t.Helper()
	var bad []struct {
		ID      string `db:"id"`
		Problem string `db:"problem"`
	}
	err := f.db.Select(&bad, `
		SELECT a.id, 'balance ' || a.balance || ' granted ' || a.granted || ' consumed ' || a.consumed || ' debt ' || a.debt ||
			' vs entries ' || e.total || ' granted ' || e.granted || ' consumed ' || e.consumed || ' remainders ' || g.remaining AS problem
		FROM credit_accounts a
		CROSS JOIN LATERAL (SELECT COALESCE(sum(amount), 0) AS total,
				COALESCE(sum(amount) FILTER (WHERE kind = 'grant'), 0) AS granted,
				COALESCE(-sum(amount) FILTER (WHERE kind = 'debit'), 0) AS consumed
			FROM credit_entries x WHERE x.merchant_id = a.merchant_id AND x.account_id = a.id) e
		CROSS JOIN LATERAL (SELECT COALESCE(sum(remaining), 0) AS remaining
			FROM credit_grant_balances x WHERE x.merchant_id = a.merchant_id AND x.account_id = a.id) g
		WHERE a.balance <> e.total OR a.granted <> e.granted OR a.consumed <> e.consumed OR g.remaining - a.debt <> a.balance
		UNION ALL
		SELECT g.grant_id, 'remaining ' || g.remaining || ' vs ledger ' || (ge.amount - ge.settled + COALESCE(d.drawn, 0))
		FROM credit_grant_balances g
		JOIN credit_entries ge ON ge.merchant_id = g.merchant_id AND ge.id = g.grant_id
		LEFT JOIN LATERAL (SELECT sum(amount) AS drawn FROM credit_entries x
			WHERE x.merchant_id = g.merchant_id AND x.grant_id = g.grant_id) d ON true
		WHERE g.remaining <> ge.amount - ge.settled + COALESCE(d.drawn, 0) OR g.amount <> ge.amount`)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: %s", b.ID, b.Problem)
	}
	if len(bad) > 0 {
		t.FailNow()
	}
}

// ledgerSum is the sum of the customer's entries effective at or before now.
func ledgerSum(t testing.TB, f *fixture, cus string, now time.Time) money.Amount {
	t.Helper()
	var sum money.Amount
	err := f.db.Get(&sum, `SELECT COALESCE(sum(e.amount), 0) FROM credit_entries e JOIN credit_accounts a ON a.merchant_id = e.merchant_id AND a.id = e.account_id
		WHERE a.merchant_id = $1 AND a.mode = $2 AND a.customer_id = $3 AND e.effective_at <= $4`, f.s.MerchantID, f.s.Mode, cus, now)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestDrawOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	late := t0.Add(48 * time.Hour)
	soon := t0.Add(time.Hour)
	never1 := f.mustGrant(cus, 10, nil, t0)
	lateG := f.mustGrant(cus, 10, &late, t0)
	soonA := f.mustGrant(cus, 10, &soon, t0)
	soonB := f.mustGrant(cus, 10, &soon, t0) // same expiry, younger
	never2 := f.mustGrant(cus, 10, nil, t0)
	f.mustDebit(cus, 35, false, t0)
	var draws []struct {
		GrantID string       `db:"grant_id"`
		Amount  money.Amount `db:"amount"`
	}
	if err := f.db.Select(&draws, `SELECT grant_id, amount FROM credit_entries WHERE kind = 'debit' ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id string
		n  money.Amount
	}{{soonA.EntryID, -10}, {soonB.EntryID, -10}, {lateG.EntryID, -10}, {never1.EntryID, -5}}
	if len(draws) != len(want) {
		t.Fatalf("draws %+v", draws)
	}
	for i, w := range want {
		if draws[i].GrantID != w.id || draws[i].Amount != w.n {
			t.Fatalf("draw %d: %+v, want %s %d", i, draws[i], w.id, w.n)
		}
	}
	_ = never2
	checkInvariants(t, f, t0)
}

// An expired remainder leaves the balance at the expiry time, before any
// sweep; the sweep (or the next change) writes the entry, once.
func TestExpiry(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	exp := t0.Add(time.Hour)
	f.mustGrant(cus, 100, &exp, t0)
	f.mustGrant(cus, 7, nil, t0)
	f.mustDebit(cus, 30, false, t0)
	if b := f.balance(cus, exp.Add(-time.Microsecond)); b.Balance != 77 {
		t.Fatalf("before expiry %d", b.Balance)
	}
	b := f.balance(cus, exp)
	if b.Balance != 7 || b.Consumed != 30 || b.Granted != 107 {
		t.Fatalf("at expiry, unswept: %+v", b)
	}
	if got := ledgerSum(t, f, cus, exp); got != 77 {
		t.Fatalf("the ledger has no expiry entry yet: %d", got)
	}
	// Two sweepers at once write one expiry entry.
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := credits.SweepExpired(f.ctx, f.db, exp.Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		}()
	}
	wg.Wait()
	if total := counts[0] + counts[1] + counts[2] + counts[3]; total != 1 {
		t.Fatalf("sweeps wrote %v", counts)
	}
	var eff time.Time
	if err := f.db.Get(&eff, `SELECT effective_at FROM credit_entries WHERE kind = 'expiry' AND amount = -70`); err != nil || !eff.Equal(exp) {
		t.Fatalf("expiry entry effective %v, %v", eff, err)
	}
	if got := ledgerSum(t, f, cus, exp); got != 7 {
		t.Fatalf("ledger after sweep %d", got)
	}
	if b := f.balance(cus, exp.Add(time.Hour)); b.Balance != 7 || b.Consumed != 30 {
		t.Fatalf("after sweep %+v", b)
	}
	// A debit after expiry cannot use the expired grant.
	if d := f.mustDebit(cus, 10, false, exp.Add(2*time.Hour)); d.Covered != 7 || d.Balance != 0 {
		t.Fatalf("debit after expiry %+v", d)
	}
	checkInvariants(t, f, exp)
}

// Without a sweep, the next change to the account writes the expiry entry.
func TestExpiryOnNextChange(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	exp := t0.Add(time.Minute)
	f.mustGrant(cus, 50, &exp, t0)
	g := f.mustGrant(cus, 5, nil, exp.Add(-time.Second))
	if g.Balance != 55 {
		t.Fatalf("grant %+v", g)
	}
	g = f.mustGrant(cus, 5, nil, exp)
	if g.Balance != 10 {
		t.Fatalf("grant at expiry %+v", g)
	}
	if n, err := credits.SweepExpired(f.ctx, f.db, exp.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("nothing left to sweep: %d %v", n, err)
	}
	checkInvariants(t, f, exp)
}

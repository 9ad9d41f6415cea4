package credits_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
)

// readAheadCalls funds u1 with ten small grants expiring a minute apart
// and three that never expire, then returns a batch of calls: small debits
// the first remainders cover, grants that sort among and after them, and
// with late a debit at a time when several have expired and one larger
// than all the first remainders together. With expired, the batch is one
// grant made once several have expired (which expires them all, read
// first or not).
func readAheadCalls(f *fixture, late, expired bool) []call {
	u1 := f.customer("u1")
	for i := range 10 {
		exp := t0.Add(time.Duration(i+1) * time.Minute)
		f.mustGrant(u1, 10, &exp, t0)
	}
	for range 3 {
		f.mustGrant(u1, 100, nil, t0)
	}
	g := func(amount int64, exp *time.Time) call {
		return call{grant: &credits.GrantInput{Customer: ref(u1), Amount: money.Amount(amount), ExpiresAt: exp}, now: t0}
	}
	d := func(amount int64, at time.Time) call {
		return call{debit: &credits.DebitInput{Customer: ref(u1), Amount: money.Amount(amount)}, now: at}
	}
	if expired {
		c := g(5, nil)
		c.now = t0.Add(3*time.Minute + 30*time.Second)
		return []call{c}
	}
	calls := []call{
		d(5, t0), d(7, t0),
		g(4, ptr(t0.Add(90*time.Second))), // among the first remainders
		d(6, t0),
		g(9, nil), // after all of them
		d(3, t0),
	}
	if late {
		calls = append(calls, d(8, t0.Add(3*time.Minute+30*time.Second)), d(250, t0.Add(4*time.Minute)))
	}
	return calls
}

// A batch reads only the first remainders of an account when they serve
// all its items, and the rest when they may not (expiries past them, or
// debits beyond them): either way every call gets what Grant and Debit
// one by one give, and the ledger ends the same.
func TestBatchReadAheadMatchesOneByOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ late, expired bool }{{false, false}, {true, false}, {false, true}} {
		for _, ahead := range []int{1, 2, 3, 8} {
			t.Run(fmt.Sprintf("%+v/ahead=%d", c, ahead), func(t *testing.T) {
				t.Parallel()
				one, batched := setup(t), setup(t)
				batched.b.SetReadAhead(ahead)
				matchOneByOne(t, one, batched, readAheadCalls(one, c.late, c.expired), readAheadCalls(batched, c.late, c.expired))
				end := t0.Add(5 * time.Minute)
				a, b := one.balance(one.customer("u1"), end), batched.balance(batched.customer("u1"), end)
				if a.Balance != b.Balance || a.Granted != b.Granted || a.Consumed != b.Consumed {
					t.Errorf("balance %+v, one by one %+v", b, a)
				}
				if a, b := remainders(t, one), remainders(t, batched); !reflect.DeepEqual(a, b) {
					t.Errorf("remainders %v, one by one %v", b, a)
				}
				checkInvariants(t, batched, end)
			})
		}
	}
}

// remainders lists what is left of each of the fixture's grants, in
// drawing order.
func remainders(t *testing.T, f *fixture) []string {
	t.Helper()
	var rows []struct {
		Remaining int64      `db:"remaining"`
		ExpiresAt *time.Time `db:"expires_at"`
	}
	if err := f.db.Select(&rows, `SELECT remaining, expires_at FROM credit_grant_balances WHERE merchant_id = $1
		ORDER BY expires_at NULLS LAST, seq`, f.s.MerchantID); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r.Remaining)
		if r.ExpiresAt != nil {
			out[i] += "@" + r.ExpiresAt.Sub(t0).String()
		}
	}
	return out
}

// A batch of grants alone reads an account's first remainder only when it
// is due, and then every remainder: it expires exactly those due at its
// items' times, none, one or several, with the balances Grant gives.
func TestBatchOfGrantsExpiresWhatIsDue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		at      time.Duration // after t0, of the batch's grants
		balance int64         // after the first grant of the batch (5)
	}{
		{"none due", 30 * time.Second, 30 + 100 + 5},
		{"one due", time.Minute, 20 + 100 + 5},
		{"several due", 150 * time.Second, 10 + 100 + 5},
		{"all due", time.Hour, 100 + 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			u1 := f.customer("u1")
			for i := range 3 {
				exp := t0.Add(time.Duration(i+1) * time.Minute)
				f.mustGrant(u1, 10, &exp, t0)
			}
			f.mustGrant(u1, 100, nil, t0)
			at := t0.Add(c.at)
			g := func(amount int64) call {
				return call{grant: &credits.GrantInput{Customer: ref(u1), Amount: money.Amount(amount)}, now: at}
			}
			got := f.runQueued([]call{g(5), g(7)})
			if got[0].Err != "" || got[1].Err != "" {
				t.Fatalf("results %+v", got)
			}
			if got[0].Grant.Balance != money.Amount(c.balance) || got[1].Grant.Balance != money.Amount(c.balance+7) {
				t.Errorf("balances %d and %d, want %d and %d", got[0].Grant.Balance, got[1].Grant.Balance, c.balance, c.balance+7)
			}
			checkInvariants(t, f, at)
		})
	}
}

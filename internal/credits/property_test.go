package credits_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
)

// model is an in-memory account with the rules of package credits, written
// as plainly as possible.
type model struct {
	grants                           []*modelGrant
	balance, granted, consumed, debt money.Amount
}

type modelGrant struct {
	seq       int
	remaining money.Amount
	expires   *time.Time
}

func (m *model) expire(now time.Time) {
	for _, g := range m.grants {
		if g.expires != nil && !g.expires.After(now) {
			m.balance -= g.remaining
			g.remaining = 0
		}
	}
}

func (m *model) balanceAt(now time.Time) money.Amount {
	b := m.balance
	for _, g := range m.grants {
		if g.expires != nil && !g.expires.After(now) {
			b -= g.remaining
		}
	}
	return b
}

func (m *model) grant(amount money.Amount, expires *time.Time, now time.Time) money.Amount {
	m.expire(now)
	settled := min(m.debt, amount)
	m.debt -= settled
	m.grants = append(m.grants, &modelGrant{seq: len(m.grants), remaining: amount - settled, expires: expires})
	m.balance += amount
	m.granted += amount
	return m.balance
}

func (m *model) debit(amount money.Amount, allowNegative bool, now time.Time) (covered, balance money.Amount) {
	m.expire(now)
	order := slices.Clone(m.grants)
	slices.SortStableFunc(order, func(a, b *modelGrant) int {
		switch {
		case a.expires == nil && b.expires == nil:
		case a.expires == nil:
			return 1
		case b.expires == nil:
			return -1
		default:
			if c := a.expires.Compare(*b.expires); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.seq, b.seq)
	})
	left := amount
	for _, g := range order {
		take := min(g.remaining, left)
		g.remaining -= take
		left -= take
	}
	covered = amount - left
	if allowNegative {
		m.debt += left
		covered = amount
	}
	m.balance -= covered
	m.consumed += covered
	return covered, m.balance
}

// Random grants, debits (with and without allow_negative), clock moves and
// sweeps on a few accounts: after every step the database agrees with the
// model, and the projections with the ledger.
func TestLedgerProperty(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	f := setup(t)
	// Few remainders read ahead, so batches often read an account again.
	ahead := 1 + rng.IntN(3)
	t.Logf("read ahead %d", ahead)
	f.b.SetReadAhead(ahead)
	cust := []string{f.customer("a"), f.customer("b")}
	models := map[string]*model{cust[0]: {}, cust[1]: {}}
	now := t0
	steps := 250
	if testing.Short() {
		steps = 80
	}
	for step := range steps {
		cus := cust[rng.IntN(len(cust))]
		m := models[cus]
		switch op := rng.IntN(10); {
		case op < 4:
			amount := money.Amount(1 + rng.IntN(1000))
			var exp *time.Time
			if rng.IntN(10) < 6 {
				e := now.Add(time.Duration(1+rng.IntN(120)) * time.Second)
				exp = &e
			}
			res := f.mustGrant(cus, amount, exp, now)
			if want := m.grant(amount, exp, now); res.Balance != want || res.Granted != amount {
				t.Fatalf("seed %d step %d: grant %d: balance %d, model %d", seed, step, amount, res.Balance, want)
			}
		case op < 8:
			if m.granted == 0 {
				continue
			}
			amount := money.Amount(1 + rng.IntN(800))
			neg := rng.IntN(5) == 0
			res := f.mustDebit(cus, amount, neg, now)
			covered, balance := m.debit(amount, neg, now)
			if res.Covered != covered || res.Balance != balance || res.Shortfall != amount-covered {
				t.Fatalf("seed %d step %d: debit %d neg=%v: %+v, model covered %d balance %d", seed, step, amount, neg, res, covered, balance)
			}
		case op < 9:
			now = now.Add(time.Duration(rng.IntN(60)) * time.Second)
		default:
			if _, err := credits.SweepExpired(f.ctx, f.db, now); err != nil {
				t.Fatal(err)
			}
			for c, mm := range models {
				mm.expire(now)
				// After a sweep the ledger alone gives the balance.
				if got := ledgerSum(t, f, c, now); got != mm.balance {
					t.Fatalf("seed %d step %d: ledger %d after sweep, model %d", seed, step, got, mm.balance)
				}
			}
		}
		for c, mm := range models {
			if mm.granted == 0 {
				continue
			}
			b := f.balance(c, now)
			if b.Balance != mm.balanceAt(now) || b.Granted != mm.granted || b.Consumed != mm.consumed {
				t.Fatalf("seed %d step %d: balance %+v, model %d granted %d consumed %d", seed, step, b, mm.balanceAt(now), mm.granted, mm.consumed)
			}
		}
		if step%25 == 0 {
			checkInvariants(t, f, now)
		}
	}
	checkInvariants(t, f, now)
}

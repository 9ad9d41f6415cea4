package credits_test

import (
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
)

// A balance adds up after an expiry: balance = granted - consumed - expired,
// whether or not the sweep has written the expiry entry yet, and expired is
// what the ledger's expiry entries say.
func TestBalanceShowsExpired(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.customer("u_expiry")
	exp := t0.Add(time.Hour)
	f.mustGrant(c, 5_000_000, &exp, t0)
	f.mustGrant(c, 2_000_000, nil, t0)
	f.mustDebit(c, 1_000_000, false, t0) // drawn from the grant that expires first

	check := func(what string, now time.Time, balance, granted, consumed, expired money.Amount) {
		t.Helper()
		b := f.balance(c, now)
		if b.Balance != balance || b.Granted != granted || b.Consumed != consumed || b.Expired != expired {
			t.Errorf("%s: %+v; want balance %d granted %d consumed %d expired %d", what, b, balance, granted, consumed, expired)
		}
		if b.Granted-b.Consumed-b.Expired != b.Balance {
			t.Errorf("%s: %d - %d - %d != %d", what, b.Granted, b.Consumed, b.Expired, b.Balance)
		}
		w := b.Wire()
		if w.Expired == nil || *w.Expired != expired.String() {
			t.Errorf("%s: wire expired %v", what, w.Expired)
		}
	}
	check("before the expiry", t0.Add(time.Minute), 6_000_000, 7_000_000, 1_000_000, 0)
	check("due, not swept", exp.Add(time.Minute), 2_000_000, 7_000_000, 1_000_000, 4_000_000)
	if _, err := credits.SweepExpired(f.ctx, f.db, exp.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var written money.Amount
	if err := f.db.GetContext(f.ctx, &written, `SELECT -sum(amount) FROM credit_entries WHERE merchant_id = $1 AND kind = 'expiry'`, f.s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if written != 4_000_000 {
		t.Fatalf("the sweep wrote expiries of %d", written)
	}
	check("swept", exp.Add(time.Hour), 2_000_000, 7_000_000, 1_000_000, 4_000_000)
	f.mustDebit(c, 3_000_000, true, exp.Add(time.Hour))
	check("in debt", exp.Add(2*time.Hour), -1_000_000, 7_000_000, 4_000_000, 4_000_000)

	// A customer without a credit account has none of the amounts.
	other := f.customer("u_none")
	if w := f.balance(other, t0).Wire(); w.Expired != nil || w.Granted != nil {
		t.Errorf("no account: %+v", w)
	}
}

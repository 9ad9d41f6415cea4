package rail_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func setup(t *testing.T) (*store.DB, *rail.Test, tenant.Scope) {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "rail")
	if err != nil {
		t.Fatal(err)
	}
	return db, rail.NewTest(db), tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
}

func settleTx(t *testing.T, db *store.DB, r rail.Local, req rail.Request) rail.Settlement {
	t.Helper()
	st, err := store.InTx(context.Background(), db, func(tx *store.Tx) (rail.Settlement, error) {
		return r.SettleTx(context.Background(), tx, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// same compares settlements, times as instants.
func same(a, b rail.Settlement) bool {
	at := a.At.Equal(b.At)
	a.At, b.At = time.Time{}, time.Time{}
	return at && a == b
}

func countSettlements(t *testing.T, db *store.DB, s tenant.Scope) int {
	t.Helper()
	var n int
	if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1 AND mode = $2`, s.MerchantID, s.Mode); err != nil {
		t.Fatal(err)
	}
	return n
}

// SettleTx answers as Settle does: the same key the same settlement, an
// invoice paid once whoever asks, the magic wallets' behaviour; and what a
// rolled-back transaction settled never happened.
func TestSettleTx(t *testing.T) {
	t.Parallel()
	db, r, s := setup(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	pay := func(payer string, at time.Time) rail.Request {
		return rail.Request{Scope: s, Kind: rail.Pay, Key: "pay:inv_1:" + payer, Nonce: "inv_1", Payer: payer, Payee: "0xpayee", Amount: 5, At: at}
	}
	first := settleTx(t, db, r, pay(rail.WalletSucceeds, at))
	if first.Status != rail.Succeeded || first.TxHash == "" || !first.At.Equal(at.Truncate(time.Microsecond)) || first.Network != "test" {
		t.Fatalf("first %+v", first)
	}
	if again := settleTx(t, db, r, pay(rail.WalletSucceeds, at.Add(time.Hour))); !same(again, first) {
		t.Fatalf("the same key answered %+v, then %+v", first, again)
	}
	if other := settleTx(t, db, r, pay(rail.WalletRevokesAfter1st, at)); !same(other, first) {
		t.Fatalf("a second payer of the invoice got %+v", other)
	}
	declined := settleTx(t, db, r, rail.Request{Scope: s, Kind: rail.Pay, Key: "pay:inv_2:x", Nonce: "inv_2", Payer: rail.WalletInsufficient, Amount: 5, At: at})
	if declined.Status != rail.Failed || declined.Reason != rail.InsufficientFunds {
		t.Fatalf("declined %+v", declined)
	}
	// The transient wallet loses its first answer and is asked again
	// inside SettleTx: one settlement, answered the same later.
	tr := rail.Request{Scope: s, Kind: rail.Pay, Key: "pay:inv_3:t", Nonce: "inv_3", Payer: rail.WalletTransientOnce, Amount: 5, At: at}
	if a, b := settleTx(t, db, r, tr), settleTx(t, db, r, tr); a.Status != rail.Succeeded || !same(a, b) {
		t.Fatalf("transient: %+v then %+v", a, b)
	}
	if n := countSettlements(t, db, s); n != 3 {
		t.Fatalf("%d settlements, want 3", n)
	}
	// Settled in a transaction that rolls back: no settlement.
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		if _, err := r.SettleTx(context.Background(), tx, pay(rail.WalletSucceeds, at)); err != nil {
			return err
		}
		_, err := r.SettleTx(context.Background(), tx, rail.Request{Scope: s, Kind: rail.Pay, Key: "pay:inv_4:x", Nonce: "inv_4", Payer: rail.WalletSucceeds, Amount: 5, At: at})
		if err != nil {
			return err
		}
		return context.Canceled
	})
	if err == nil || countSettlements(t, db, s) != 3 {
		t.Fatalf("rolled back: %v, %d settlements", err, countSettlements(t, db, s))
	}
}

// Two transactions settling one key at once get one settlement: the second
// waits for the first and answers what it committed.
func TestSettleTxConcurrentSameKey(t *testing.T) {
	t.Parallel()
	db, r, s := setup(t)
	req := rail.Request{Scope: s, Kind: rail.Activate, Key: "act:1", Nonce: "act:1", Payer: rail.WalletSucceeds, Amount: 1000000, At: time.Now()}
	const n = 8
	got := make([]rail.Settlement, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = settleTx(t, db, r, req)
		}()
	}
	wg.Wait()
	for i := range got {
		if !same(got[i], got[0]) {
			t.Fatalf("answers differ: %+v and %+v", got[0], got[i])
		}
	}
	if c := countSettlements(t, db, s); c != 1 {
		t.Fatalf("%d settlements", c)
	}
}

// The refusal of an unknown test payer names every magic wallet whole.
func TestCheckTestPayerNamesEveryWallet(t *testing.T) {
	_, err := rail.CheckTestPayer("0x1111111111111111111111111111111111111111")
	if err == nil {
		t.Fatal("an unknown payer was accepted")
	}
	for _, w := range rail.MagicWallets() {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%q does not name %s", err, w)
		}
	}
}

package payments_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// Ten refunds of one payment at once, as ten `tollgate admin refund` runs:
// never more than the payment, and each run either makes a refund of its
// own or fails with invalid_request; none answers another's refund.
func TestConcurrentRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	s := tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
	now := time.Now().UTC().Truncate(time.Microsecond)
	p := payments.FromSettlement(s, rail.Settlement{Key: "pay:refund-test", Kind: rail.Pay, Payer: rail.WalletSucceeds,
		Payee: "0x1111111111111111111111111111111111111111", Amount: 10_000_000, Status: rail.Succeeded, TxHash: "0xabc", At: now, Network: "test"})
	p, err = store.InTx(ctx, db, func(tx *store.Tx) (payments.Payment, error) {
		stored, _, err := payments.Insert(ctx, tx, p)
		return stored, err
	})
	if err != nil {
		t.Fatal(err)
	}
	testRail := rail.NewTest(db)
	railFor := func(m tenant.Mode) (rail.Rail, bool) { return testRail, m == tenant.Test }
	clockOf := func(tenant.Scope) time.Time { return time.Now() }

	const runs = 10
	amount := money.Amount(3_000_000)
	refunds, errs := make([]payments.Refund, runs), make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refunds[i], errs[i] = payments.IssueRefund(ctx, db, railFor, payments.RefundInput{PaymentID: p.ID, Amount: &amount}, clockOf)
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range runs {
		if errs[i] != nil {
			if e, ok := apperr.As(errs[i]); !ok || e.Code != apperr.InvalidRequest {
				t.Errorf("run %d: %v, want invalid_request", i, errs[i])
			}
			continue
		}
		if ids[refunds[i].ID] {
			t.Errorf("run %d answered refund %s, another run's", i, refunds[i].ID)
		}
		ids[refunds[i].ID] = true
	}
	if len(ids) != 3 {
		t.Errorf("%d refunds made, want 3 of 3000000 from 10000000 (errors: %v)", len(ids), errs)
	}
	var sum struct {
		N        int          `db:"n"`
		Refunded money.Amount `db:"refunded"`
	}
	if err := db.GetContext(ctx, &sum, `SELECT count(*) AS n, coalesce(sum(amount), 0) AS refunded FROM refunds WHERE payment_id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	got, err := payments.Get(ctx, db, s, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.N != len(ids) || sum.Refunded != got.AmountRefunded || got.AmountRefunded > got.Amount {
		t.Fatalf("%d refunds of %s recorded, payment refunded %s of %s", sum.N, sum.Refunded, got.AmountRefunded, got.Amount)
	}
	// What is left is refunded by the next run, and then nothing is.
	last, err := payments.IssueRefund(ctx, db, railFor, payments.RefundInput{PaymentID: p.ID}, clockOf)
	if err != nil || last.Amount != 1_000_000 {
		t.Fatalf("the rest: %+v %v", last, err)
	}
	_, err = payments.IssueRefund(ctx, db, railFor, payments.RefundInput{PaymentID: p.ID}, clockOf)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest {
		t.Fatalf("refund of a refunded payment: %v", err)
	}
}

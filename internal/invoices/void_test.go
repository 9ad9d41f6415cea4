package invoices

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// whileBlocked runs hold in a transaction, and inside it, once hold has
// taken the invoice's row lock, starts void and waits until it is queued
// behind that lock; the transaction then commits, and void's answer is
// returned.
func whileBlocked(t *testing.T, ctx context.Context, db *store.DB, hold func(tx *store.Tx) error, void func() (Invoice, error)) (Invoice, error) {
	t.Helper()
	type answer struct {
		inv Invoice
		err error
	}
	done := make(chan answer, 1)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := hold(tx); err != nil {
			return err
		}
		go func() {
			inv, err := void()
			done <- answer{inv, err}
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var waiting int
			if err := db.GetContext(ctx, &waiting, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
				return err
			}
			if waiting > 0 {
				return nil
			}
			if time.Now().After(deadline) {
				t.Fatal("the void never waited for the row lock")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	a := <-done
	return a.inv, a.err
}

// A void made while a payment of the invoice is in flight answers what it
// left: 409 invoice_not_open once the payment commits, never a stale open.
func TestVoidRacingAPayment(t *testing.T) {
	t.Parallel()
	ctx, db, s := openScope(t)
	now := time.Now()
	inv, err := Create(ctx, db, s, input(1), now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := whileBlocked(t, ctx, db, func(tx *store.Tx) error {
		locked, ok, err := Lock(ctx, tx, inv.ID)
		if err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		// Marked paid as a payment's statement marks it (PaidCTE).
		_, err = tx.ExecContext(ctx, `WITH `+PaidCTE("paid", `SELECT $1::text AS merchant_id, $2::text AS invoice_id,
			'pay_test'::text AS payment_id, $3::timestamptz AS at`)+` SELECT count(*) FROM paid`, locked.MerchantID, locked.ID, now)
		return err
	}, func() (Invoice, error) { return Void(ctx, db, s, inv.ID, now) })
	if e, ok := apperr.As(err); !ok || e.Code != apperr.InvoiceNotOpen {
		t.Fatalf("void during a payment: %+v %v, want invoice_not_open", got, err)
	}
}

// Of two voids at once, the later answers the void the first left.
func TestVoidRacingAVoid(t *testing.T) {
	t.Parallel()
	ctx, db, s := openScope(t)
	now := time.Now()
	inv, err := Create(ctx, db, s, input(2), now)
	if err != nil {
		t.Fatal(err)
	}
	var first Invoice
	got, err := whileBlocked(t, ctx, db, func(tx *store.Tx) error {
		var err error
		first, err = Void(ctx, tx, s, inv.ID, now)
		return err
	}, func() (Invoice, error) { return Void(ctx, db, s, inv.ID, now.Add(time.Second)) })
	if err != nil || got.Status != StatusVoid || first.Status != StatusVoid {
		t.Fatalf("two voids: %s and %s %v", first.Status, got.Status, err)
	}
	if !got.VoidedAt.Equal(*first.VoidedAt) {
		t.Fatalf("the second void moved voided_at from %s to %s", first.VoidedAt, got.VoidedAt)
	}
	// Another merchant's, or no, invoice: not found.
	_, err = Void(ctx, db, tenant.Scope{MerchantID: s.MerchantID, Mode: tenant.Live}, inv.ID, now)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.ResourceNotFound {
		t.Fatalf("live scope: %v", err)
	}
}

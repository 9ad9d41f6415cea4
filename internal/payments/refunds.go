package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Refund statuses.
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// MaxRefundReason bounds a refund's reason, in bytes.
const MaxRefundReason = 500

// Refund is money returned to a payment's payer.
type Refund struct {
	MerchantID    string       `db:"merchant_id"`
	Mode          tenant.Mode  `db:"mode"`
	ID            string       `db:"id"`
	Seq           int64        `db:"seq"`
	PaymentID     string       `db:"payment_id"`
	Amount        money.Amount `db:"amount"`
	Reason        *string      `db:"reason"`
	Status        string       `db:"status"`
	TxHash        *string      `db:"tx_hash"`
	SettlementKey string       `db:"settlement_key"`
	CreatedAt     time.Time    `db:"created_at"`
}

const refundColumns = `merchant_id, mode, id, seq, payment_id, amount, reason, status, tx_hash, settlement_key, created_at`

// Wire returns the refund's public form.
func (r Refund) Wire() wire.Refund {
	return wire.Refund{Object: "refund", ID: r.ID, PaymentID: r.PaymentID, Amount: r.Amount.String(), Reason: r.Reason,
		Status: r.Status, TxHash: r.TxHash, CreatedAt: wire.Timestamp(r.CreatedAt), Livemode: r.Mode == tenant.Live}
}

// RefundInput is a refund the operator asks for (tollgate admin refund).
type RefundInput struct {
	PaymentID string
	// Amount is what to refund; nil refunds everything left.
	Amount *money.Amount
	Reason *string
}

// IssueRefund refunds part or all of a payment (any merchant: an
// operator's action) through the rail of its mode at now, where now is the payment's
// merchant's clock (clockOf gives it). A refund never exceeds what is left
// of the payment. The payment's amount_refunded and status change, and
// refund.succeeded is emitted, in one transaction once the rail confirms
// the refund. Fails with resource_not_found or invalid_request (nothing left
// to refund, an amount over what is left, a zero amount).
func IssueRefund(ctx context.Context, db *store.DB, railFor func(tenant.Mode) (rail.Rail, bool), in RefundInput, clockOf func(tenant.Scope) time.Time) (Refund, error) {
	if in.Reason != nil && len(*in.Reason) > MaxRefundReason {
		return Refund{}, apperr.Field("reason", "must be at most %d bytes", MaxRefundReason)
	}
	var p Payment
	err := db.GetContext(ctx, &p, `SELECT `+columns+` FROM payments WHERE id = $1`, in.PaymentID)
	if store.NotFound(err) {
		return Refund{}, apperr.New(apperr.ResourceNotFound, "no payment %q", in.PaymentID)
	}
	if err != nil {
		return Refund{}, store.Translate(err)
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM refunds WHERE merchant_id = $1 AND payment_id = $2`, p.MerchantID, p.ID); err != nil {
		return Refund{}, store.Translate(err)
	}
	left := p.Amount - p.AmountRefunded
	amount := left
	if in.Amount != nil {
		amount = *in.Amount
	}
	switch {
	case left == 0:
		return Refund{}, apperr.Field("payment", "%s is fully refunded already", p.ID)
	case amount <= 0:
		return Refund{}, apperr.Field("amount", "must be a positive amount of base units")
	case amount > left:
		return Refund{}, apperr.Field("amount", "%s exceeds what is left of the payment (%s)", amount, left)
	}
	s := p.Scope()
	rl, ok := railFor(s.Mode)
	if !ok {
		return Refund{}, apperr.New(apperr.PaymentFailed, "no settlement rail for %s mode: refunds of live payments need the on-chain rail", s.Mode)
	}
	now := clockOf(s)
	// The n-th refund of a payment has a key of its own: asking again after
	// a crash gets the same settlement back.
	st, err := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Refund, Key: fmt.Sprintf("ref:%s:%d", p.ID, n),
		Nonce: deref(p.SettlementKey), Payer: deref(p.Payee), Payee: deref(p.Payer), Amount: amount, At: now})
	if err != nil {
		return Refund{}, err
	}
	if st.Status != rail.Succeeded {
		return Refund{}, apperr.New(apperr.PaymentFailed, "refund failed: %s", st.Reason)
	}
	return store.InTx(ctx, db, func(tx *store.Tx) (Refund, error) { return recordRefund(ctx, tx, p, st, in.Reason) })
}

// recordRefund records a succeeded refund settlement against the payment
// (locked), once per settlement.
func recordRefund(ctx context.Context, tx *store.Tx, p Payment, st rail.Settlement, reason *string) (Refund, error) {
	var rs []Refund
	err := tx.SelectContext(ctx, &rs, `SELECT `+refundColumns+` FROM refunds WHERE merchant_id = $1 AND mode = $2 AND settlement_key = $3`,
		p.MerchantID, p.Mode, st.Key)
	if err != nil || len(rs) == 1 {
		return firstRefund(rs), store.Translate(err)
	}
	var left money.Amount
	if err := tx.GetContext(ctx, &left, `SELECT amount - amount_refunded FROM payments WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, p.MerchantID, p.ID); err != nil {
		return Refund{}, store.Translate(err)
	}
	if st.Amount > left {
		return Refund{}, apperr.Field("amount", "%s exceeds what is left of the payment (%s)", st.Amount, left)
	}
	var r Refund
	hash := st.TxHash
	err = tx.GetContext(ctx, &r, `WITH r AS (
			INSERT INTO refunds (merchant_id, mode, id, payment_id, amount, reason, status, tx_hash, settlement_key, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'succeeded', $7, $8, $9) RETURNING `+refundColumns+`
		), p AS (
			UPDATE payments SET amount_refunded = amount_refunded + $5,
				status = CASE WHEN amount_refunded + $5 = amount THEN 'refunded' ELSE 'partially_refunded' END
			WHERE merchant_id = $1 AND id = $4
		) SELECT * FROM r`,
		p.MerchantID, p.Mode, id.New("re"), p.ID, st.Amount, reason, hash, st.Key, st.At)
	if err != nil {
		return Refund{}, store.Translate(err)
	}
	_, err = events.Emit(ctx, tx, p.Scope(), events.RefundSucceeded, st.At, r.Wire())
	return r, err
}

func firstRefund(rs []Refund) Refund {
	if len(rs) == 0 {
		return Refund{}
	}
	return rs[0]
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package payments

import (
	"context"
	"fmt"
	"hash/fnv"
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
	// Payload is what a live rail needs: the merchant wallet's signed
	// authorization of the refund (see rail.Request.Payload).
	Payload any
	// Key, when set, is the key PrepareRefund gave the caller (a live
	// refund's authorization is signed for it): IssueRefund then fails
	// rather than settle under another, should a refund of the payment
	// have been made since.
	Key string
}

// PreparedRefund is a refund checked against its payment, before the rail
// is asked: what it refunds, and the key it settles under (a live refund's
// authorization nonce derives from it, so the merchant signs for it).
type PreparedRefund struct {
	Payment Payment
	Amount  money.Amount
	Key     string
}

// PrepareRefund checks in against the payment (any merchant: an operator's
// action): what is left of it after its refunds, succeeded or pending. It
// fails with resource_not_found or invalid_request (nothing left to
// refund, an amount over what is left, a zero amount, a reason too long).
func PrepareRefund(ctx context.Context, q store.Querier, in RefundInput) (PreparedRefund, error) {
	if in.Reason != nil && len(*in.Reason) > MaxRefundReason {
		return PreparedRefund{}, apperr.Field("reason", "must be at most %d bytes", MaxRefundReason)
	}
	var p Payment
	err := q.GetContext(ctx, &p, `SELECT `+columns+` FROM payments WHERE id = $1`, in.PaymentID)
	if store.NotFound(err) {
		return PreparedRefund{}, apperr.New(apperr.ResourceNotFound, "no payment %q", in.PaymentID)
	}
	if err != nil {
		return PreparedRefund{}, store.Translate(err)
	}
	var sums struct {
		N       int          `db:"n"`
		Pending money.Amount `db:"pending"`
	}
	if err := q.GetContext(ctx, &sums, `SELECT count(*) AS n, coalesce(sum(amount) FILTER (WHERE status = 'pending'), 0) AS pending
		FROM refunds WHERE merchant_id = $1 AND payment_id = $2`, p.MerchantID, p.ID); err != nil {
		return PreparedRefund{}, store.Translate(err)
	}
	left := p.Amount - p.AmountRefunded - sums.Pending
	amount := left
	if in.Amount != nil {
		amount = *in.Amount
	}
	switch {
	case left == 0 && sums.Pending > 0:
		return PreparedRefund{}, apperr.Field("payment", "%s has refunds awaiting confirmation for everything left", p.ID)
	case left == 0:
		return PreparedRefund{}, apperr.Field("payment", "%s is fully refunded already", p.ID)
	case amount <= 0:
		return PreparedRefund{}, apperr.Field("amount", "must be a positive amount of base units")
	case amount > left:
		return PreparedRefund{}, apperr.Field("amount", "%s exceeds what is left of the payment (%s)", amount, left)
	}
	// The n-th refund of a payment has a key of its own: asking again after
	// a crash gets the same settlement back.
	return PreparedRefund{Payment: p, Amount: amount, Key: fmt.Sprintf("ref:%s:%d", p.ID, sums.N)}, nil
}

// IssueRefund refunds part or all of a payment (any merchant: an
// operator's action) through the rail of its mode at now, where now is the payment's
// merchant's clock (clockOf gives it). A refund never exceeds what is left
// of the payment. When the rail confirms at once (the test rail), the
// payment's amount_refunded and status change, and refund.succeeded is
// emitted, in one transaction; when it answers pending (the live rail
// awaiting confirmations), the refund is recorded pending and completed by
// CompleteRefundTx later. Fails with resource_not_found, invalid_request
// (see PrepareRefund) or payment_failed (the rail refused it).
//
// Refunds of one payment are issued one at a time (an advisory lock held
// from the check to the record): each concurrent run sees the refunds
// made before it, so it settles under a key of its own and either makes
// its own refund or fails with invalid_request (nothing left, too much),
// never answering another run's refund nor colliding with its key.
func IssueRefund(ctx context.Context, db *store.DB, railFor func(tenant.Mode) (rail.Rail, bool), in RefundInput, clockOf func(tenant.Scope) time.Time) (Refund, error) {
	unlock, err := lockPayment(ctx, db, in.PaymentID)
	if err != nil {
		return Refund{}, err
	}
	defer unlock()
	pr, err := PrepareRefund(ctx, db, in)
	if err != nil {
		return Refund{}, err
	}
	if in.Key != "" && in.Key != pr.Key {
		return Refund{}, apperr.Field("payment", "another refund of %s was made meanwhile; prepare this one again", pr.Payment.ID)
	}
	p := pr.Payment
	s := p.Scope()
	rl, ok := railFor(s.Mode)
	if !ok {
		return Refund{}, apperr.New(apperr.PaymentFailed, "no settlement rail for %s mode: refunds of live payments need the on-chain rail", s.Mode)
	}
	now := clockOf(s)
	st, err := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Refund, Key: pr.Key,
		Nonce: deref(p.SettlementKey), Payer: deref(p.Payee), Payee: deref(p.Payer), Amount: pr.Amount, At: now, Payload: in.Payload})
	if err != nil {
		return Refund{}, err
	}
	switch st.Status {
	case rail.Pending:
		return store.InTx(ctx, db, func(tx *store.Tx) (Refund, error) { return insertPending(ctx, tx, p, st, in.Reason, now) })
	case rail.Succeeded:
		return store.InTx(ctx, db, func(tx *store.Tx) (Refund, error) { return recordRefund(ctx, tx, p, st, in.Reason) })
	}
	return Refund{}, apperr.New(apperr.PaymentFailed, "refund failed: %s", st.Reason)
}

// lockPayment takes the session advisory lock serialising the refunds of
// a payment, on a connection of its own; unlock releases it and returns
// the connection.
func lockPayment(ctx context.Context, db *store.DB, paymentID string) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, store.Translate(err)
	}
	h := fnv.New64a()
	h.Write([]byte("tollgate refund\x00" + paymentID))
	key := int64(h.Sum64())
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Close()
		return nil, store.Translate(err)
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		conn.Close()
	}, nil
}

// insertPending records a refund the rail is still settling.
func insertPending(ctx context.Context, tx *store.Tx, p Payment, st rail.Settlement, reason *string, now time.Time) (Refund, error) {
	var r Refund
	err := tx.GetContext(ctx, &r, `INSERT INTO refunds (merchant_id, mode, id, payment_id, amount, reason, status, settlement_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8)
		ON CONFLICT (merchant_id, mode, settlement_key) DO UPDATE SET settlement_key = EXCLUDED.settlement_key
		RETURNING `+refundColumns, p.MerchantID, p.Mode, id.New("re"), p.ID, st.Amount, reason, st.Key, now.Truncate(time.Microsecond))
	return r, store.Translate(err)
}

// CompleteRefundTx records in tx the final outcome of a refund the rail
// answered pending: succeeded, the payment's amount_refunded and status
// change and refund.succeeded is emitted; failed, the refund is marked
// failed (nothing moved). A refund already completed is returned as it is.
// The settlement's Nonce is the refunded payment's settlement key.
func CompleteRefundTx(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement) (Refund, error) {
	var rs []Refund
	if err := tx.SelectContext(ctx, &rs, `SELECT `+refundColumns+` FROM refunds WHERE merchant_id = $1 AND mode = $2 AND settlement_key = $3 FOR UPDATE`,
		s.MerchantID, s.Mode, st.Key); err != nil {
		return Refund{}, store.Translate(err)
	}
	if len(rs) == 1 && rs[0].Status != RefundPending {
		return rs[0], nil
	}
	if st.Status != rail.Succeeded {
		if len(rs) == 0 {
			return Refund{}, nil
		}
		var r Refund
		err := tx.GetContext(ctx, &r, `UPDATE refunds SET status = 'failed' WHERE merchant_id = $1 AND id = $2 RETURNING `+refundColumns,
			s.MerchantID, rs[0].ID)
		return r, store.Translate(err)
	}
	p, ok, err := BySettlement(ctx, tx, s, st.Nonce)
	if err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("refund %s: no payment with settlement %q", st.Key, st.Nonce)
		}
		return Refund{}, err
	}
	if len(rs) == 0 {
		return recordRefund(ctx, tx, p, st, nil)
	}
	var r Refund
	hash := st.TxHash
	err = tx.GetContext(ctx, &r, `WITH r AS (
			UPDATE refunds SET status = 'succeeded', tx_hash = $3 WHERE merchant_id = $1 AND id = $2 RETURNING `+refundColumns+`
		), p AS (
			UPDATE payments SET amount_refunded = amount_refunded + $5,
				status = CASE WHEN amount_refunded + $5 = amount THEN 'refunded' ELSE 'partially_refunded' END
			WHERE merchant_id = $1 AND id = $4
		) SELECT * FROM r`, s.MerchantID, rs[0].ID, hash, p.ID, rs[0].Amount)
	if err != nil {
		return Refund{}, store.Translate(err)
	}
	_, err = events.Emit(ctx, tx, s, events.RefundSucceeded, st.At, r.Wire())
	return r, err
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

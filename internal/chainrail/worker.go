package chainrail

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/chain/watch"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Recorder records final live settlements in the money path, each in the
// transaction the worker marks it recorded in (so each is recorded exactly
// once). The daemon implements it with checkout's, subscriptions' and
// payments' recording functions.
type Recorder interface {
	// Paid records a succeeded payment of invoice st.Nonce: the payment,
	// the invoice paid and invoice.paid.
	Paid(ctx context.Context, tx *store.Tx, st rail.Settlement) error
	// Activated records a succeeded activation: the subscription to planID
	// for customerID, with the discount of coupon couponID redeemed at its
	// checkout ("" for none), its first payment and subscription.active.
	Activated(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement, planID, customerID, couponID string) error
	// Refunded records a refund's outcome (succeeded or failed).
	Refunded(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement) error
	// Changed records a succeeded re-authorization: the subscription
	// draws on the new authorization (st.Key) from now on, and its change
	// to planID is made (at now, st.Amount is its proration, paid).
	Changed(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement, planID string, c PlanChange) error
	// Revoked marks the live subscriptions drawing on the authorization
	// (the activation's key) revoked at `at`.
	Revoked(ctx context.Context, tx *store.Tx, s tenant.Scope, authorizationKey string, at time.Time) error
}

// lostAfter is how long an operation may stay stored with no transaction
// (a crash between storing and submitting it, and the payer never came
// back) before it is failed, freeing the invoice for another payment.
const lostAfter = 10 * time.Minute

// recordBatch bounds the operations one step records.
const recordBatch = 100

// Step advances the rail once: it steps the relayer (rebroadcasts,
// replacements, confirmations, reorgs), records every operation that became
// final through rec, and reads the chain's new plan revocations and
// allowance drops. more is true when a full batch was recorded. Several
// replicas may step at once: the relayer and the watcher take their locks,
// and each row is recorded by the one that locks it.
func (r *Rail) Step(ctx context.Context, rec Recorder) (more bool, err error) {
	if _, err := r.relayer.Step(ctx); err != nil {
		return false, err
	}
	n, err := r.recordFinal(ctx, rec)
	if err != nil {
		return false, err
	}
	if err := r.followRevocations(ctx, rec); err != nil {
		return false, err
	}
	return n == recordBatch, nil
}

func (r *Rail) recordFinal(ctx context.Context, rec Recorder) (int, error) {
	var rows []row
	if err := r.db.SelectContext(ctx, &rows, `SELECT `+rowColumns+` FROM chain_settlements
		WHERE recorded_at IS NULL AND chain_id = $1 ORDER BY requested_at LIMIT $2`, r.chainID, recordBatch); err != nil {
		return 0, store.Translate(err)
	}
	for _, w := range rows {
		if w.Status == rail.Pending {
			st, err := r.answer(ctx, w)
			if err != nil {
				return 0, err
			}
			if st.Status == rail.Pending {
				if err := r.failIfLost(ctx, w); err != nil {
					return 0, err
				}
				continue
			}
		}
		if err := r.record(ctx, rec, w.scope(), w.Key); err != nil {
			return 0, fmt.Errorf("chainrail: recording %s: %w", w.Key, err)
		}
	}
	return len(rows), nil
}

// failIfLost fails an operation stored long ago that never got a
// transaction.
func (r *Rail) failIfLost(ctx context.Context, w row) error {
	if r.clock.Now().Sub(w.RequestedAt) < lostAfter {
		return nil
	}
	known, err := r.submitted(ctx, w)
	if err != nil || known {
		return err
	}
	_, err = r.finish(ctx, w, rail.Failed, "submission_lost", [32]byte{})
	return err
}

// record hands one final row to rec and marks it recorded, in one
// transaction; a row another replica is recording is skipped.
func (r *Rail) record(ctx context.Context, rec Recorder, s tenant.Scope, key string) error {
	return r.db.InTx(ctx, func(tx *store.Tx) error {
		var ws []row
		if err := tx.SelectContext(ctx, &ws, `SELECT `+rowColumns+` FROM chain_settlements WHERE merchant_id = $1 AND mode = $2
			AND key = $3 AND recorded_at IS NULL AND status <> 'pending' FOR UPDATE SKIP LOCKED`, s.MerchantID, s.Mode, key); err != nil {
			return store.Translate(err)
		}
		if len(ws) == 0 {
			return nil
		}
		w := ws[0]
		st := r.settlement(w)
		var err error
		switch {
		case w.Kind == rail.Pay && st.Status == rail.Succeeded:
			err = rec.Paid(ctx, tx, st)
		case w.Kind == rail.Activate && st.Status == rail.Succeeded:
			var sub subject
			if err := json.Unmarshal(w.Subject, &sub); err != nil {
				return err
			}
			if sub.PlanChange != nil {
				err = rec.Changed(ctx, tx, s, st, sub.PlanID, *sub.PlanChange)
			} else {
				err = rec.Activated(ctx, tx, s, st, sub.PlanID, sub.CustomerID, sub.CouponID)
			}
		case w.Kind == rail.Refund:
			err = rec.Refunded(ctx, tx, s, st)
		}
		// Charges are recorded by the billing engine, which asks about them
		// again under their keys; failed payments and activations (plan
		// changes too) leave the invoice, plan or subscription as it was.
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE chain_settlements SET recorded_at = $4 WHERE merchant_id = $1 AND mode = $2 AND key = $3`,
			s.MerchantID, s.Mode, key, r.clock.Now())
		return store.Translate(err)
	})
}

// followRevocations reads the watcher's next range and revokes the
// subscriptions whose plan the payer revoked, or whose payer dropped the
// plan manager's allowance to zero.
func (r *Rail) followRevocations(ctx context.Context, rec Recorder) error {
	if r.plans == nil {
		return nil
	}
	batch, err := r.watcher.Step(ctx)
	if err != nil {
		return err
	}
	if batch.Reorg != nil {
		// A revocation is the payer's wish whether or not its block stays:
		// nothing recorded from the lost blocks is undone.
		r.log.Warn("chain reorganised under the watcher", "from_block", *batch.Reorg)
	}
	for _, ev := range batch.Events {
		var acts []row
		switch {
		case ev.Kind == watch.PlanRevoked:
			err = r.db.SelectContext(ctx, &acts, `SELECT `+rowColumns+` FROM chain_settlements WHERE plan_id = $1 AND kind = 'activate'`,
				strings.ToLower(ev.PlanID.Hex()))
		case ev.Kind == watch.Approval && ev.AllowanceRevoked:
			err = r.db.SelectContext(ctx, &acts, `SELECT `+rowColumns+` FROM chain_settlements WHERE payer = $1 AND kind = 'activate'
				AND chain_id = $2`, strings.ToLower(ev.From.Hex()), r.chainID)
		default:
			continue
		}
		if err != nil {
			return store.Translate(err)
		}
		for _, w := range acts {
			r.log.Info("payer revoked a plan on chain", "authorization", w.Key, "event", ev.Kind, "tx", ev.Log.TxHash)
			if err := r.db.InTx(ctx, func(tx *store.Tx) error {
				return rec.Revoked(ctx, tx, w.scope(), w.Key, r.clock.Now())
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

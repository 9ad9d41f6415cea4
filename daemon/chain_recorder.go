package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// chainRecorder records the live rail's confirmed settlements with the
// money path's own recording functions (the ones test mode records with).
type chainRecorder struct{ s *Server }

// Paid records an invoice's payment. Money that reached a merchant for an
// invoice voided (or paid by another payer) meanwhile cannot be recorded as
// its payment; it is logged for the operator to refund.
func (c chainRecorder) Paid(ctx context.Context, tx *store.Tx, st rail.Settlement) error {
	_, _, err := c.s.money.checkout.RecordInvoicePayment(ctx, tx, st)
	if apperr.CodeOf(err) == apperr.InvoiceNotOpen {
		c.s.log.Error("a live payment was confirmed for an invoice that is no longer open; refund it to the payer",
			"invoice", st.Nonce, "payer", st.Payer, "amount", st.Amount, "tx", st.TxHash, "err", err)
		return nil
	}
	return err
}

// Activated creates the subscription of a confirmed activation.
func (c chainRecorder) Activated(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement, planID, customerID, couponID string) error {
	p, ok, err := plans.Get(ctx, tx, planID)
	if err != nil {
		return err
	}
	if !ok || p.Scope() != s {
		return fmt.Errorf("activation %s names plan %q, which is not %s's", st.Key, planID, s.MerchantID)
	}
	_, err = c.s.money.checkout.RecordActivation(ctx, tx, p, customerID, st, couponID)
	if apperr.CodeOf(err) == apperr.AlreadySubscribed {
		c.s.log.Error("a live activation was confirmed for a customer already subscribed; revoke or refund it",
			"plan", planID, "customer", customerID, "payer", st.Payer, "tx", st.TxHash)
		return nil
	}
	return err
}

// Changed makes the plan change a confirmed re-authorization paid for. A
// subscription or plan that is gone cannot be changed; the money that
// reached the merchant is logged for the operator to refund.
func (c chainRecorder) Changed(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement, planID string, ch chainrail.PlanChange) error {
	_, err := subscriptions.RecordReauthorization(ctx, tx, s, st, planID, ch.SubscriptionID, ch.At, ch.Effective)
	if apperr.CodeOf(err) == apperr.ResourceNotFound {
		c.s.log.Error("a live plan change was confirmed for a subscription or plan that is gone; refund it to the payer",
			"subscription", ch.SubscriptionID, "plan", planID, "payer", st.Payer, "amount", st.Amount, "tx", st.TxHash, "err", err)
		return nil
	}
	return err
}

// Refunded completes a refund.
func (c chainRecorder) Refunded(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement) error {
	_, err := payments.CompleteRefundTx(ctx, tx, s, st)
	return err
}

// Revoked ends the subscriptions drawing on a revoked authorization.
func (c chainRecorder) Revoked(ctx context.Context, tx *store.Tx, s tenant.Scope, authorizationKey string, at time.Time) error {
	_, err := subscriptions.RevokeByAuthorizationTx(ctx, tx, s, authorizationKey, at)
	return err
}

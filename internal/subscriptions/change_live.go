package subscriptions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// A live-mode plan change above what the payer authorized on chain is made
// in two steps. PrepareReauthorization checks it when the payer's wallet
// asks for the terms and when it posts them signed: the new plan's amount
// is the cap the payer signs, and the proration is the first charge of the
// activation the relayer submits (internal/chainrail). Once the chain has
// confirmed that activation, RecordReauthorization makes the change, in
// the settlement worker's transaction that marks the activation recorded,
// so it is made exactly once; an activation that reverts or is refused
// changes nothing.

// Reauthorization is a live change waiting for the payer's authorization.
type Reauthorization struct {
	Subscription Subscription
	Plan         plans.Plan
	At           string
	// Proration is what the activation charges (0 at period_end), computed
	// at Effective.
	Proration money.Amount
	Effective time.Time
	// UntilRenewal is the time left before the subscription's next charge.
	UntilRenewal time.Duration
	// Done is true when the change is already made (an earlier
	// authorization of it was recorded): there is nothing to sign.
	Done bool
}

// PrepareReauthorization checks a live-mode change of the subscription
// above what its payer authorized, at now. It fails as ChangeTx does, and
// with invalid_request naming plan when the payer's authorization already
// covers the plan (the change needs none: POST …/change makes it).
func PrepareReauthorization(ctx context.Context, db *store.DB, subscriptionID string, in ChangeInput, now time.Time) (Reauthorization, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Reauthorization, error) {
		x, ok, err := ByID(ctx, tx, subscriptionID)
		if err != nil {
			return Reauthorization{}, err
		}
		if !ok || x.Mode != tenant.Live {
			return Reauthorization{}, apperr.New(apperr.ResourceNotFound, "no live subscription %q", subscriptionID)
		}
		p, err := changeTarget(ctx, tx, x, in)
		if err != nil {
			return Reauthorization{}, err
		}
		if x.CurrentPeriodEnd == nil {
			return Reauthorization{}, apperr.Field("subscription", "%s has no current period to change", x.ID)
		}
		r := Reauthorization{Subscription: x, Plan: p, At: in.At, Effective: now.Truncate(time.Microsecond),
			UntilRenewal: x.CurrentPeriodEnd.Sub(now)}
		if p.Amount <= x.authorized() {
			moved := x.PlanID == p.ID && in.At == AtNow || x.PendingPlanID != nil && *x.PendingPlanID == p.ID && in.At == AtPeriodEnd
			if moved {
				r.Done = true
				return r, nil
			}
			return r, apperr.Field("plan", "the payer's authorization of %s per period already covers %s: change it with POST /v1/subscriptions/%s/change",
				x.authorized(), p.ID, x.ID)
		}
		if p.ID == x.PlanID {
			return r, apperr.Field("plan", "%s is the subscription's plan already", p.ID)
		}
		if err := checkNotSubscribed(ctx, tx, x, p.ID); err != nil {
			return r, err
		}
		pr, err := prorate(x, p, in.At, r.Effective)
		if err != nil {
			return r, err
		}
		r.Proration = max(pr.amount, 0)
		return r, nil
	})
}

// RecordReauthorization records in tx the confirmed activation st that
// authorized the change of subscription c to planID: the proration paid
// (a payment with its proration line), the subscription drawing on the new
// authorization, up to the plan's amount, and the change itself, now or
// at period end, with subscription.updated. A subscription that ended, or
// moved to another plan, meanwhile keeps its terms; the money the chain
// moved is still recorded as its payment.
func RecordReauthorization(ctx context.Context, tx *store.Tx, s tenant.Scope, st rail.Settlement, planID, subscriptionID, at string,
	effective time.Time) (Subscription, error) {
	x, err := lock(ctx, tx, s, subscriptionID)
	if err != nil {
		return Subscription{}, err
	}
	p, ok, err := plans.Get(ctx, tx, planID)
	if err != nil {
		return Subscription{}, err
	}
	if !ok || p.Scope() != s {
		return Subscription{}, apperr.New(apperr.ResourceNotFound, "no plan %q in this account and mode", planID)
	}
	applies := x.Live() && x.PlanID != p.ID && (at == AtNow || at == AtPeriodEnd)
	if st.Amount > 0 {
		pay, err := prorationPayment(ctx, tx, x, p, st, effective)
		if err != nil {
			return Subscription{}, err
		}
		x.LatestPaymentID = &pay.ID
	}
	if !applies {
		_, err := saveTerms(ctx, tx, x)
		return x, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET authorization_key = $3 WHERE merchant_id = $1 AND id = $2`,
		x.MerchantID, x.ID, st.Key); err != nil {
		return Subscription{}, store.Translate(err)
	}
	now := st.At
	if now.IsZero() {
		now = effective
	}
	if at == AtNow {
		x.adopt(p, *x.CurrentPeriodEnd)
		x.Changes++
		if err := switchFeatures(ctx, tx, x, p, now); err != nil {
			return Subscription{}, err
		}
	} else {
		end := *x.CurrentPeriodEnd
		x.PendingPlanID, x.PendingChangeAt = &p.ID, &end
	}
	a := max(p.Amount, x.authorized())
	x.AuthorizedAmount = &a
	res, err := storeChange(ctx, tx, x, now)
	return res.Subscription, err
}

// prorationPayment records the proration the activation st paid.
func prorationPayment(ctx context.Context, tx *store.Tx, x Subscription, p plans.Plan, st rail.Settlement, effective time.Time) (payments.Payment, error) {
	lines := []wire.PaymentLine{{Kind: "proration", Amount: st.Amount.String(),
		Description: fmt.Sprintf("%s to %s for the rest of the period", x.PlanID, p.ID)}}
	if pr, err := prorate(x, p, AtNow, effective); err == nil && pr.amount == st.Amount {
		lines = pr.lines(x, p)
	}
	b, err := json.Marshal(lines)
	if err != nil {
		return payments.Payment{}, err
	}
	pay := payments.FromSettlement(x.Scope(), st)
	start, end := effective, effective
	if x.CurrentPeriodEnd != nil {
		end = *x.CurrentPeriodEnd
	}
	pay.SubscriptionID, pay.CustomerID, pay.PeriodStart, pay.PeriodEnd, pay.Lines = &x.ID, x.CustomerID, &start, &end, b
	stored, _, err := payments.Insert(ctx, tx, pay)
	return stored, err
}

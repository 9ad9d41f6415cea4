package subscriptions

import (
	"context"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// ReauthorizationTarget is the subscription and plan of a re-authorization
// page (the checkout_url of authorization_required): ok=false when the
// subscription or the plan is not there, or not of one account and mode.
func ReauthorizationTarget(ctx context.Context, q store.Querier, subscriptionID, planID string) (Subscription, plans.Plan, bool, error) {
	x, ok, err := ByID(ctx, q, subscriptionID)
	if err != nil || !ok {
		return x, plans.Plan{}, false, err
	}
	p, ok, err := plans.Get(ctx, q, planID)
	if err != nil || !ok || p.Scope() != x.Scope() {
		return x, p, false, err
	}
	return x, p, true, nil
}

// ConfirmChange is the payer authorizing a plan change above what they
// authorized before, at its checkout_url: the new amount becomes what the
// payer authorized, then the change runs as ChangeTx, all in one
// transaction. Only the subscription's payer can authorize it. In test mode
// the authorization is recorded here, as checkout records it; live mode's
// is a new plan signed from the payer's wallet and activated on chain
// (PrepareReauthorization, RecordReauthorization), never this form
// (invalid_request naming payer).
func ConfirmChange(ctx context.Context, db *store.DB, env ChangeEnv, subscriptionID string, in ChangeInput, payer string, now func(tenant.Scope) (time.Time, error)) (Subscription, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Subscription, error) {
		x0, ok, err := ByID(ctx, tx, subscriptionID)
		if err != nil {
			return Subscription{}, err
		}
		if !ok {
			return Subscription{}, apperr.New(apperr.ResourceNotFound, "no subscription %q", subscriptionID)
		}
		s := x0.Scope()
		x, err := lock(ctx, tx, s, x0.ID)
		if err != nil {
			return Subscription{}, err
		}
		if s.Mode == tenant.Live {
			return Subscription{}, apperr.Field("payer", "a live subscription's new amount is authorized from the payer's wallet on this page, not with a test wallet")
		}
		if !strings.EqualFold(strings.TrimSpace(payer), deref(x.Payer)) {
			return Subscription{}, apperr.Field("payer", "only the subscription's payer %s can authorize its plan change", deref(x.Payer))
		}
		p, err := changeTarget(ctx, tx, x, in)
		if err != nil {
			return Subscription{}, err
		}
		t, err := now(s)
		if err != nil {
			return Subscription{}, err
		}
		if p.Amount > x.authorized() {
			a := p.Amount
			x.AuthorizedAmount = &a
			if _, err := saveTerms(ctx, tx, x); err != nil {
				return Subscription{}, err
			}
		}
		in.Preview = false
		res, err := ChangeTx(ctx, tx, env, s, x.ID, in, t)
		return res.Subscription, err
	})
}

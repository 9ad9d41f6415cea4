package subscriptions

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
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
// the authorization is a new activation on the test rail, as checkout's
// is (testReauthorize); live mode's
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
			if err := testReauthorize(ctx, tx, env, x, p, t); err != nil {
				return Subscription{}, err
			}
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

// testReauthorize mirrors on the test rail what a live re-authorization
// does on chain: a new activation of the payer, for the new plan, becomes
// the subscription's authorization, so the rail's ledger records it and the
// payer's magic wallet decides it (a payer whose every operation fails
// refuses it: 402, nothing changes). Its key names the subscription's
// change, the plan and the amount, so a retry finds the same settlement.
func testReauthorize(ctx context.Context, tx *store.Tx, env ChangeEnv, x Subscription, p plans.Plan, now time.Time) error {
	rl, ok := env.Rail(x.Mode)
	local, isLocal := rl.(rail.Local)
	if !ok || !isLocal {
		return apperr.New(apperr.PaymentFailed, "no test rail to authorize the new amount on")
	}
	w, _, err := wallet.Get(ctx, tx, x.Scope())
	if err != nil {
		return err
	}
	key := fmt.Sprintf("act:%s:reauth:%d:%s:%d", x.ID, x.Changes, p.ID, p.Amount)
	req := rail.Request{Scope: x.Scope(), Kind: rail.Activate, Key: key, Nonce: key, Payer: deref(x.Payer), Payee: w.Address, At: now}
	var st rail.Settlement
	for attempt := 0; attempt < 3; attempt++ {
		if st, err = local.SettleTx(ctx, tx, req); err == nil || !rail.IsTransient(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	if st.Status != rail.Succeeded {
		return apperr.New(apperr.PaymentFailed, "the payer's wallet refused the new authorization: %s", st.Reason)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET authorization_key = $3 WHERE merchant_id = $1 AND id = $2`,
		x.MerchantID, x.ID, key); err != nil {
		return store.Translate(err)
	}
	return nil
}

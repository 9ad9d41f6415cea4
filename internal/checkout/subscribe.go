package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Subscribe subscribes a customer (by external id, default the payer) to
// the plan with id (any merchant) from the payer's wallet: the rail
// activates the authorization (with the first period's charge for a
// licensed plan), then the subscription, its first payment,
// subscription.active and the plan's entitlements are recorded in one
// transaction. Fails with resource_not_found, invalid_request,
// payment_failed (402) or already_subscribed (409: the customer has a live
// subscription to the plan).
//
// With a local rail (test mode) the activation is settled in that
// transaction too: one commit, and a checkout that turns out to be
// already_subscribed leaves no settlement behind. Another rail is asked
// first, then the outcome recorded.
func (e Env) Subscribe(ctx context.Context, planID string, in Input) (subscriptions.Subscription, error) {
	st, x, err := e.SubmitSubscription(ctx, planID, in)
	if err == nil && st.Status == rail.Pending {
		err = apperr.New(apperr.PaymentFailed, "the activation is submitted and awaits confirmation on chain")
	}
	return x, err
}

// SubmitSubscription is Subscribe for a rail that may answer pending (the
// live rail awaiting confirmations): it returns the rail's settlement too.
// A pending activation records nothing yet (the live rail's settlement
// worker records it with RecordActivation once confirmed). Errors are
// Subscribe's.
func (e Env) SubmitSubscription(ctx context.Context, planID string, in Input) (rail.Settlement, subscriptions.Subscription, error) {
	if !validText(planID) {
		return rail.Settlement{}, subscriptions.Subscription{}, apperr.New(apperr.ResourceNotFound, "no such plan")
	}
	if err := e.checkMode(ctx, planID); err != nil {
		return rail.Settlement{}, subscriptions.Subscription{}, err
	}
	if in.Coupon == nil {
		// A coupon is redeemed on the general path below; the fast paths
		// serve the plain checkout.
		if st, x, done, err := e.subscribeFast(ctx, planID, in); done {
			return st, x, err
		}
	}
	var out activation
	err := e.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = e.subscribeTx(ctx, tx, planID, in)
		if err == nil && out.declined != nil {
			// Rolled back: a declined checkout leaves nothing behind, not
			// even the customer it named.
			err = failed(*out.declined)
		}
		return err
	})
	switch {
	case out.declined != nil:
		return *out.declined, subscriptions.Subscription{}, failed(*out.declined)
	case err != nil:
		return out.st, subscriptions.Subscription{}, err
	case out.remote != nil:
		return e.subscribeRemote(ctx, out, in)
	}
	return out.st, out.sub, nil
}

// activation is the outcome of a checkout of a plan in one transaction.
type activation struct {
	plan     plans.Plan
	who      string
	st       rail.Settlement
	sub      subscriptions.Subscription
	declined *rail.Settlement
	remote   rail.Rail
	coupon   *coupons.Coupon
}

func (e Env) subscribeTx(ctx context.Context, tx *store.Tx, planID string, in Input) (activation, error) {
	p, ok, err := plans.Get(ctx, tx, planID)
	if err != nil {
		return activation{}, err
	}
	if !ok {
		return activation{}, apperr.New(apperr.ResourceNotFound, "no plan %q", planID)
	}
	out := activation{plan: p}
	s := p.Scope()
	if out.who, err = payer(s, in.Payer); err != nil {
		return out, err
	}
	rl, err := e.railFor(s)
	if err != nil {
		return out, err
	}
	local, ok := rl.(rail.Local)
	if !ok {
		out.remote = rl
		return out, nil
	}
	payee, now, err := e.terms(ctx, tx, s, nil)
	if err != nil {
		return out, err
	}
	c, err := customers.Upsert(ctx, tx, s, externalID(in, out.who), now)
	if err != nil {
		return out, err
	}
	// No look for a live subscription first: recording one finds it
	// (already_subscribed), and the settlement made here rolls back with it
	// (and so does the coupon's redemption).
	req, err := e.activationRequest(ctx, tx, s, p, c.ID, out.who, payee, now)
	if err != nil {
		return out, err
	}
	full := req.Amount
	if in.Coupon != nil {
		cp, err := coupons.Redeem(ctx, tx, s, *in.Coupon, p.ID, now)
		if err != nil {
			return out, err
		}
		out.coupon = &cp
		req.Amount = subscriptions.Discounted(&cp, req.Amount)
	}
	st, err := local.SettleTx(ctx, tx, req)
	if err != nil {
		return out, err
	}
	if st.Status == rail.Failed {
		out.declined = &st
		return out, nil
	}
	out.st = st
	out.sub, _, err = e.recordActivation(ctx, tx, p, c.ID, st, full, out.coupon)
	return out, err
}

// subscribeRemote checks out a plan with a rail outside the database: the
// activation is settled first, under a key derived from the plan, the
// customer, the payer and the customer's earlier subscriptions to the plan
// (so a retry after a crash settles under the same key), then recorded. A
// pending activation is returned unrecorded.
//
// A coupon is checked now (invalid_coupon when it cannot be used) and the
// activation's first charge discounted by it; the payer's authorization
// (the plan's cap) stays the plan's amount, which later charges draw on.
// The payload carries the coupon to the recording, which counts its
// redemption once the chain has confirmed the discounted charge (see
// RecordActivation).
func (e Env) subscribeRemote(ctx context.Context, a activation, in Input) (rail.Settlement, subscriptions.Subscription, error) {
	p := a.plan
	s := p.Scope()
	payee, now, err := e.terms(ctx, e.DB, s, nil)
	if err != nil {
		return rail.Settlement{}, subscriptions.Subscription{}, err
	}
	var coupon *coupons.Coupon
	if in.Coupon != nil {
		c, err := coupons.Lookup(ctx, e.DB, s, *in.Coupon, p.ID, now)
		if err != nil {
			return rail.Settlement{}, subscriptions.Subscription{}, err
		}
		coupon = &c
	}
	// The customer is recorded before the rail is asked: its id is in the
	// activation's key, which a retry after a crash must find again.
	c, err := customers.Upsert(ctx, e.DB, s, externalID(in, a.who), now)
	if err != nil {
		return rail.Settlement{}, subscriptions.Subscription{}, err
	}
	if _, live, err := subscriptions.LiveFor(ctx, e.DB, p, c.ID); err != nil || live {
		if err == nil {
			err = apperr.New(apperr.AlreadySubscribed, "customer %s already has a live subscription to %s", c.ID, p.ID)
		}
		return rail.Settlement{}, subscriptions.Subscription{}, err
	}
	req, err := e.activationRequest(ctx, e.DB, s, p, c.ID, a.who, payee, now)
	if err != nil {
		return rail.Settlement{}, subscriptions.Subscription{}, err
	}
	couponID := ""
	if coupon != nil {
		req.Amount, couponID = subscriptions.Discounted(coupon, req.Amount), coupon.ID
	}
	req.Payload = in.Payload
	if sp, ok := req.Payload.(SubscriptionPayload); ok {
		req.Payload = sp.ForSubscription(p.ID, c.ID, couponID)
	}
	st, err := rail.SettleOne(ctx, a.remote, req)
	switch {
	case err != nil:
		return st, subscriptions.Subscription{}, err
	case st.Status == rail.Failed:
		return st, subscriptions.Subscription{}, failed(st)
	case st.Status == rail.Pending:
		return st, subscriptions.Subscription{}, nil
	}
	x, err := store.InTx(ctx, e.DB, func(tx *store.Tx) (subscriptions.Subscription, error) {
		return e.RecordActivation(ctx, tx, p, c.ID, st, couponID)
	})
	return st, x, err
}

// RecordActivation records in tx a succeeded activation of plan p for the
// customer: the subscription, its first payment, subscription.active and
// the plan's entitlements (see subscriptions.ActivateTx). couponID is the
// coupon a live checkout redeemed ("" for none), whose discount the
// activation's first charge already had: the subscription starts with it,
// and its redemption is counted here, once, whatever the coupon's state is
// now (see coupons.CountRedemption). The same activation recorded twice
// returns the first subscription. It fails with already_subscribed when
// the customer has another live subscription to p.
func (e Env) RecordActivation(ctx context.Context, tx *store.Tx, p plans.Plan, customerID string, st rail.Settlement, couponID string) (subscriptions.Subscription, error) {
	if couponID == "" {
		x, _, err := e.recordActivation(ctx, tx, p, customerID, st, st.Amount, nil)
		return x, err
	}
	s := p.Scope()
	c, ok, err := coupons.Get(ctx, tx, s, couponID)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	if !ok {
		return subscriptions.Subscription{}, fmt.Errorf("activation %s names coupon %q, which is not %s's", st.Key, couponID, s.MerchantID)
	}
	// What the activation would have charged without the coupon, as
	// activationOf made it: the discount may have taken it to zero, which
	// is no trial.
	trial, err := subscriptions.TrialFor(ctx, tx, p, customerID)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	full := activationOf(s, p, customerID, st.Payer, 0, trial, st.Payee, st.At).Amount
	x, replayed, err := e.recordActivation(ctx, tx, p, customerID, st, full, &c)
	if err != nil || replayed {
		return x, err
	}
	return x, coupons.CountRedemption(ctx, tx, s, c.ID)
}

// recordActivation is RecordActivation with the coupon redeemed at checkout
// (nil for none): the subscription starts with its discount. full is what
// the activation would have charged without the coupon (a discount to
// zero is no trial). replayed is true when the activation was recorded
// before.
func (e Env) recordActivation(ctx context.Context, tx *store.Tx, p plans.Plan, customerID string, st rail.Settlement, full money.Amount,
	c *coupons.Coupon) (subscriptions.Subscription, bool, error) {
	trial, err := subscriptions.TrialActivation(ctx, tx, p, customerID, full)
	if err != nil {
		return subscriptions.Subscription{}, false, err
	}
	return subscriptions.ActivateTx(ctx, tx, subscriptions.ActivateInput{Plan: p, CustomerID: customerID, Payer: st.Payer,
		Activation: st, UsageGrace: e.UsageGrace, Now: st.At, Trial: trial, Coupon: c})
}

// activationRequest is the rail request activating customerID's
// subscription to p: with the first period's charge for a licensed plan,
// none for a metered one or a trial (they only authorize at checkout),
// paying payee at now (the terms).
func (e Env) activationRequest(ctx context.Context, q store.Querier, s tenant.Scope, p plans.Plan, customerID, who, payee string, now time.Time) (rail.Request, error) {
	n, err := subscriptions.ActivationIndex(ctx, q, p, customerID)
	if err != nil {
		return rail.Request{}, err
	}
	trial, err := subscriptions.TrialFor(ctx, q, p, customerID)
	if err != nil {
		return rail.Request{}, err
	}
	return activationOf(s, p, customerID, who, n, trial, payee, now), nil
}

// activationOf is the activation request of the customer's n+1th
// subscription to p (n counts the earlier ones), a trial or not.
func activationOf(s tenant.Scope, p plans.Plan, customerID, who string, n int, trial bool, payee string, now time.Time) rail.Request {
	first := p.Amount
	if p.UsageType == plans.Metered || trial {
		first = 0
	}
	key := fmt.Sprintf("act:%s:%s:%s:%d", p.ID, customerID, who, n)
	return rail.Request{Scope: s, Kind: rail.Activate, Key: key, Nonce: key, Payer: who, Payee: payee, Amount: first, At: now}
}

// externalID is the merchant's id for the customer: the form's, else the
// payer's address.
func externalID(in Input, who string) string {
	if in.ExternalCustomerID != nil && *in.ExternalCustomerID != "" {
		return *in.ExternalCustomerID
	}
	return who
}

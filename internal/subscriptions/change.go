package subscriptions

import (
	"context"
	"net/url"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// When a plan change takes effect.
const (
	AtNow       = "now"
	AtPeriodEnd = "period_end"
)

// ChangeInput is a POST /v1/subscriptions/{id}/change request.
type ChangeInput struct {
	Plan    string
	At      string // AtNow or AtPeriodEnd
	Preview bool
}

// maxID bounds an id argument: longer is no id of ours.
const maxID = 255

// DecodeChange reads the change request's schema; at defaults to
// period_end. Errors are invalid_request naming the field.
func DecodeChange(o *fields.Object) (ChangeInput, error) {
	in := ChangeInput{Plan: o.RequiredString("plan", 1, maxID), At: AtPeriodEnd}
	in.At = decodeAt(o, in.At)
	if b := o.Bool("preview"); b != nil {
		in.Preview = *b
	}
	return in, o.Err()
}

func decodeAt(o *fields.Object, def string) string {
	at := o.String("at", 0, 0)
	if at == nil {
		return def
	}
	if *at != AtNow && *at != AtPeriodEnd {
		o.Fail(apperr.Field("at", "must be now or period_end"))
		return def
	}
	return *at
}

// ChangeEnv is what a plan change needs beyond the request: the rails that
// charge an immediate upgrade's proration, and the base URL of the page
// where a payer authorizes a larger amount.
type ChangeEnv struct {
	Rail    func(tenant.Mode) (rail.Rail, bool)
	BaseURL string
}

// ChangeResult is a change's answer: the subscription after it, or with
// preview, what it would do.
type ChangeResult struct {
	Subscription Subscription
	Preview      *wire.SubscriptionChangePreview
}

// Change is ChangeTx in a transaction of its own.
func Change(ctx context.Context, db *store.DB, env ChangeEnv, s tenant.Scope, subscriptionID string, in ChangeInput, now time.Time) (ChangeResult, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (ChangeResult, error) {
		return ChangeTx(ctx, tx, env, s, subscriptionID, in, now)
	})
}

// ChangeTx changes the scope's subscription to the plan in tx, with the
// subscription's row locked, so concurrent changes run one after another
// and each sees the one before (a second identical request finds nothing
// left to do and charges nothing).
//
// period_end sets the pending change (the billing engine applies it when
// the next period starts); now changes the terms at once, keeps the
// period's dates, charges the prorated difference on the rail (a payment
// with a proration line; a failed charge is payment_failed and nothing
// changes) or grants it as prepaid credits, and switches the features.
// Either emits subscription.updated. The current plan clears a pending
// change. preview computes and changes nothing.
//
// Fails with resource_not_found; invalid_request naming plan (unknown, of
// another account or mode, of the other usage type), at (now on a metered
// plan) or subscription (ended); already_subscribed when the customer has
// a live subscription to the plan; authorization_required (with the URL
// where the payer authorizes it) when the plan's amount exceeds what the
// payer authorized.
func ChangeTx(ctx context.Context, tx *store.Tx, env ChangeEnv, s tenant.Scope, subscriptionID string, in ChangeInput, now time.Time) (ChangeResult, error) {
	now = now.Truncate(time.Microsecond)
	x, err := lock(ctx, tx, s, subscriptionID)
	if err != nil {
		return ChangeResult{}, err
	}
	p, err := changeTarget(ctx, tx, x, in)
	if err != nil {
		return ChangeResult{}, err
	}
	pr, err := prorate(x, p, in.At, now)
	if err != nil {
		return ChangeResult{}, err
	}
	if in.Preview {
		w, err := pr.wire(x, p, in.At)
		return ChangeResult{Subscription: x, Preview: &w}, err
	}
	if p.ID == x.PlanID {
		return clearPending(ctx, tx, x, now)
	}
	if p.Amount > x.authorized() {
		return ChangeResult{}, authorizationRequired(env, x, p, in.At)
	}
	if err := checkNotSubscribed(ctx, tx, x, p.ID); err != nil {
		return ChangeResult{}, err
	}
	if in.At == AtPeriodEnd {
		end := *x.CurrentPeriodEnd
		x.PendingPlanID, x.PendingChangeAt = &p.ID, &end
		return storeChange(ctx, tx, x, now)
	}
	return changeNow(ctx, tx, env, x, p, pr, now)
}

// changeTarget loads and checks the plan a change moves to.
func changeTarget(ctx context.Context, tx *store.Tx, x Subscription, in ChangeInput) (plans.Plan, error) {
	if !x.Live() {
		return plans.Plan{}, apperr.Field("subscription", "%s is %s: its plan cannot change", x.ID, x.Status)
	}
	p, ok, err := plans.Get(ctx, tx, in.Plan)
	if err != nil {
		return plans.Plan{}, err
	}
	if !ok || p.Scope() != x.Scope() {
		// Another account's or mode's plan is as unknown as no plan.
		return plans.Plan{}, apperr.Field("plan", "no plan %q in this account and mode", in.Plan)
	}
	if x.UsageType == nil || p.UsageType != *x.UsageType {
		return plans.Plan{}, apperr.Field("plan", "%s is %s and the subscription is %s: a change keeps the usage type", p.ID, p.UsageType, deref(x.UsageType))
	}
	if in.At == AtNow && x.Status == Trialing {
		return plans.Plan{}, apperr.Field("at", "a trialing subscription changes when its trial ends (at period_end): nothing is charged during a trial")
	}
	if in.At == AtNow && x.Metered() {
		return plans.Plan{}, apperr.Field("at", "a metered subscription changes at the period's end only: its usage is rated when the period ends")
	}
	return p, nil
}

// authorized is what the payer authorized per period.
func (x Subscription) authorized() money.Amount {
	if x.AuthorizedAmount != nil {
		return *x.AuthorizedAmount
	}
	return *x.Amount
}

// authorizationRequired is the error of a change above the payer's
// authorization, with the page where the payer authorizes the plan's
// amount and the change then happens.
func authorizationRequired(env ChangeEnv, x Subscription, p plans.Plan, at string) error {
	e := apperr.New(apperr.AuthorizationRequired, "%s charges up to %s per period and the payer authorized %s: the payer authorizes the new amount at checkout_url, and the change happens then",
		p.ID, p.Amount, x.authorized())
	e.CheckoutURL = ReauthorizationURL(env.BaseURL, x.ID, p.ID, at)
	return e
}

// ReauthorizationURL is the page where a subscription's payer authorizes a
// change to planID, which happens then.
func ReauthorizationURL(baseURL, subscriptionID, planID, at string) string {
	return baseURL + "/checkout/" + url.PathEscape(subscriptionID) + "?" + url.Values{"plan": {planID}, "at": {at}}.Encode()
}

// checkNotSubscribed refuses a change to a plan the customer already has
// a live subscription to (one live subscription per customer and plan).
func checkNotSubscribed(ctx context.Context, tx *store.Tx, x Subscription, planID string) error {
	var n int
	err := tx.GetContext(ctx, &n, `SELECT count(*) FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3
		AND customer_id = $4 AND status IN ('trialing', 'active', 'past_due') AND id <> $5`, x.MerchantID, x.Mode, planID, deref(x.CustomerID), x.ID)
	if err != nil {
		return store.Translate(err)
	}
	if n > 0 {
		return apperr.New(apperr.AlreadySubscribed, "customer %s already has a live subscription to %s", deref(x.CustomerID), planID)
	}
	return nil
}

// clearPending is a change to the current plan: it drops a pending change,
// and is nothing when there is none.
func clearPending(ctx context.Context, tx *store.Tx, x Subscription, now time.Time) (ChangeResult, error) {
	if x.PendingPlanID == nil {
		return ChangeResult{Subscription: x}, nil
	}
	x.PendingPlanID, x.PendingChangeAt = nil, nil
	return storeChange(ctx, tx, x, now)
}

// storeChange writes the subscription's terms and pending change and emits
// subscription.updated.
func storeChange(ctx context.Context, tx *store.Tx, x Subscription, now time.Time) (ChangeResult, error) {
	saved, err := saveTerms(ctx, tx, x)
	if err != nil {
		return ChangeResult{}, err
	}
	x = saved[0]
	_, err = events.Emit(ctx, tx, x.Scope(), events.SubscriptionUpdated, now, x.Wire())
	return ChangeResult{Subscription: x}, err
}

// adopt gives x the plan's terms. When the interval changes, the next
// period starts at boundary on the new interval: x is re-anchored there,
// one period before its first.
func (x *Subscription) adopt(p plans.Plan, boundary time.Time) {
	if x.AuthorizedAmount == nil {
		a := *x.Amount
		x.AuthorizedAmount = &a
	}
	sameInterval := deref(x.Interval) == p.Interval && equalDays(x.IntervalDays, p.IntervalDays)
	amount, interval, productID := p.Amount, p.Interval, p.ProductID
	x.PlanID, x.ProductID, x.Amount, x.Interval, x.IntervalDays = p.ID, &productID, &amount, &interval, p.IntervalDays
	x.MeterID, x.PricingModel = p.MeterID, p.PricingJSON
	x.PendingPlanID, x.PendingChangeAt = nil, nil
	if !sameInterval {
		b := boundary
		x.Anchor, x.PeriodIndex = &b, -1
	}
}

func equalDays(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

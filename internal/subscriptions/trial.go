package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Trials. A plan with trial_days starts a subscription trialing: checkout
// authorizes the payer and charges nothing, the plan's features are granted
// at once, and the periods are anchored on trial_end, so the first period
// (index 0) starts when the trial ends. While trialing, the current period
// is the trial itself [start, trial_end).
//
// The engine acts on a trialing subscription twice, each time claimed like
// any due action (FOR UPDATE SKIP LOCKED, next_action_at moved in the same
// transaction as the event, so it happens once whatever the number of
// workers): TrialNotice before trial_end, which emits
// subscription.trial_will_end, then at trial_end the first period starts
// (startFirstPeriod). A trial of 3 days or less gets its notice at
// checkout, in the activation's transaction.
//
// One trial per customer and product: a customer who has had a trialing
// subscription to the plan's product gets none again (TrialFor). Every
// plan has a product of its own today, so this is one trial per plan; the
// rule keys on the product so that plans sharing one share the trial.

// TrialNotice is how long before trial_end subscription.trial_will_end
// fires.
const TrialNotice = 3 * 24 * time.Hour

// startTrial makes x, a new subscription starting at its anchor, a trial of
// days days.
func startTrial(x *Subscription, days int) {
	start := *x.Anchor
	end := start.Add(time.Duration(days) * 24 * time.Hour)
	x.Status, x.TrialEnd, x.Anchor = Trialing, &end, &end
	x.PeriodIndex, x.CurrentPeriodStart, x.CurrentPeriodEnd = 0, &start, &end
	next := end
	if notice := end.Add(-TrialNotice); notice.After(start) {
		next = notice
	}
	x.NextActionAt = &next
}

// noticeAtStart emits subscription.trial_will_end at once for a trial too
// short to be noticed before its end (next_action_at is already trial_end).
func noticeAtStart(ctx context.Context, tx *store.Tx, x Subscription, now time.Time) error {
	if x.Status != Trialing || x.TrialEnd == nil || x.NextActionAt == nil || x.NextActionAt.Before(*x.TrialEnd) {
		return nil
	}
	_, err := events.Emit(ctx, tx, x.Scope(), events.SubscriptionTrialWillEnd, now, x.Wire())
	return err
}

// TrialFor reports whether a checkout of p by the customer starts a trial:
// p has trial_days and the customer has never had a trial of p's product
// (in the same merchant and mode).
func TrialFor(ctx context.Context, q store.Querier, p plans.Plan, customerID string) (bool, error) {
	if p.TrialDays == nil {
		return false, nil
	}
	var had bool
	err := q.GetContext(ctx, &had, `SELECT EXISTS (SELECT 1 FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3
		AND product_id = $4 AND trial_end IS NOT NULL)`, p.MerchantID, p.Mode, customerID, p.ProductID)
	return !had, store.Translate(err)
}

// TrialActivation reports whether an activation of p for the customer,
// settled for `settled`, started a trial: a licensed plan's activation
// charges the first period unless it is a trial, so one that charged
// nothing is; a metered plan's charges nothing either way, so the
// customer's history decides (TrialFor). The live rail's worker records an
// activation long after it was asked for, and asks this.
func TrialActivation(ctx context.Context, q store.Querier, p plans.Plan, customerID string, settled money.Amount) (bool, error) {
	if p.TrialDays == nil {
		return false, nil
	}
	if p.UsageType != plans.Metered {
		return settled == 0, nil
	}
	return TrialFor(ctx, q, p, customerID)
}

// decideTrial plans the action due on a trialing subscription at t: the
// notice before trial_end, or the start of the first period at trial_end
// (a licensed plan charges it: success makes it active, failure past due
// and dunning, as a renewal's; a metered plan rates it at its end like any
// period). A change scheduled for the trial's end (next) takes effect with
// the first period.
func (b *Biller) decideTrial(a *action, next *plans.Plan) error {
	x, t := a.x, a.at
	if t.Before(*x.TrialEnd) {
		at := *x.TrialEnd
		a.after.NextActionAt = &at
		a.events = []string{events.SubscriptionTrialWillEnd}
		return nil
	}
	a.adopt(next)
	// The periods are anchored on trial_end (a change of interval anchors
	// them on the same boundary), so the first is period 0.
	start, end := a.after.period(0)
	a.after.Status, a.after.PeriodIndex, a.after.CurrentPeriodStart, a.after.CurrentPeriodEnd = Active, 0, &start, &end
	a.events = []string{events.SubscriptionActive}
	if a.after.Metered() {
		at := end.Add(b.Policy.UsageGrace)
		a.after.NextActionAt = &at
		return nil
	}
	at := end
	a.after.NextActionAt = &at
	amount, lines, err := a.discount(0, *a.after.Amount, nil)
	if amount > 0 {
		a.charge = &charge{key: chargeKey(x, start, 0), amount: amount, lines: lines, start: start, end: end}
	}
	return err
}

// trialEnding reports whether x's due action is its trial's end.
func trialEnding(x Subscription) bool {
	return x.Status == Trialing && x.TrialEnd != nil && x.NextActionAt != nil && !x.NextActionAt.Before(*x.TrialEnd)
}

package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// CancelInput is a POST /v1/subscriptions/{id}/cancel request.
type CancelInput struct {
	// AtPeriodEnd (the default) ends the subscription when its current
	// period ends; false ends it now.
	AtPeriodEnd bool
}

// DecodeCancel reads the cancel request's schema; an empty object is the
// default, at the period's end.
func DecodeCancel(o *fields.Object) (CancelInput, error) {
	in := CancelInput{AtPeriodEnd: true}
	if b := o.Bool("at_period_end"); b != nil {
		in.AtPeriodEnd = *b
	}
	return in, o.Err()
}

// Cancel ends the scope's subscription at its period's end (cancel_at is
// set and subscription.updated emitted; the billing engine expires it then,
// with subscription.expired) or at now (it expires at once and
// subscription.expired is emitted), in a transaction of its own. Canceling
// at period end twice changes nothing and emits nothing the second time.
// Fails with resource_not_found, or invalid_request when it has ended.
func Cancel(ctx context.Context, db *store.DB, s tenant.Scope, subscriptionID string, in CancelInput, now time.Time) (Subscription, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Subscription, error) {
		return CancelTx(ctx, tx, s, subscriptionID, in, now)
	})
}

// CancelTx is Cancel in the caller's transaction.
func CancelTx(ctx context.Context, tx *store.Tx, s tenant.Scope, subscriptionID string, in CancelInput, now time.Time) (Subscription, error) {
	x, err := lock(ctx, tx, s, subscriptionID)
	if err != nil {
		return Subscription{}, err
	}
	if !x.Live() {
		return Subscription{}, apperr.Field("subscription", "%s is %s already", x.ID, x.Status)
	}
	now = now.Truncate(time.Microsecond)
	if in.AtPeriodEnd {
		end := *x.CurrentPeriodEnd
		if x.CancelAt != nil && x.CancelAt.Equal(end) {
			return x, nil
		}
		x.CancelAt = &end
		return saveUpdated(ctx, tx, x, now)
	}
	x.Status, x.CancelAt, x.EndedAt, x.NextActionAt = Expired, &now, &now, nil
	saved, err := save(ctx, tx, x)
	if err != nil {
		return Subscription{}, err
	}
	x = saved[0]
	if err := entitlements.FollowSubscription(ctx, tx, s, x.ID, entitlements.FollowExpired, now, time.Time{}); err != nil {
		return Subscription{}, err
	}
	_, err = events.Emit(ctx, tx, s, events.SubscriptionExpired, now, x.Wire())
	return x, err
}

// UndoCancel takes back a cancellation at the period's end (cancel_at is
// cleared, so the subscription renews as before, and subscription.updated
// is emitted), in a transaction of its own. A subscription not set to
// cancel is returned unchanged, with no event. Fails with
// resource_not_found, or invalid_request when it has ended.
func UndoCancel(ctx context.Context, db *store.DB, s tenant.Scope, subscriptionID string, now time.Time) (Subscription, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Subscription, error) {
		x, err := lock(ctx, tx, s, subscriptionID)
		if err != nil {
			return Subscription{}, err
		}
		if !x.Live() {
			return Subscription{}, apperr.Field("subscription", "%s is %s already", x.ID, x.Status)
		}
		if x.CancelAt == nil {
			return x, nil
		}
		x.CancelAt = nil
		return saveUpdated(ctx, tx, x, now.Truncate(time.Microsecond))
	})
}

// saveUpdated stores x's state (see save) and emits subscription.updated
// with the subscription as stored, in tx.
func saveUpdated(ctx context.Context, tx *store.Tx, x Subscription, now time.Time) (Subscription, error) {
	saved, err := save(ctx, tx, x)
	if err != nil {
		return Subscription{}, err
	}
	_, err = events.Emit(ctx, tx, x.Scope(), events.SubscriptionUpdated, now, saved[0].Wire())
	return saved[0], err
}

// Upcoming previews the scope's subscription's next charge at now, charging
// nothing: a licensed plan's next renewal (or the charge dunning is
// collecting), a metered plan's current period rated with the usage so far
// and capped, with lines saying how. Fails with resource_not_found, or
// invalid_request when no charge is coming (ended, or canceled at the
// period's end).
func Upcoming(ctx context.Context, q store.Querier, s tenant.Scope, subscriptionID string, now time.Time) (wire.Payment, error) {
	x, err := Get(ctx, q, s, subscriptionID)
	if err != nil {
		return wire.Payment{}, err
	}
	return UpcomingOf(ctx, q, x, now)
}

// UpcomingOf is Upcoming for a subscription the caller has read: a page
// showing several subscriptions' next charges reads each once, and a
// licensed plan's preview then needs no statement at all.
func UpcomingOf(ctx context.Context, q store.Querier, x Subscription, now time.Time) (wire.Payment, error) {
	var err error
	if !x.Live() {
		return wire.Payment{}, apperr.Field("subscription", "%s is %s: no charge is coming", x.ID, x.Status)
	}
	var amount money.Amount
	var lines []byte
	var start, end time.Time
	switch {
	case x.Status == Trialing:
		if x.CancelAt != nil && !x.CancelAt.After(*x.TrialEnd) {
			return wire.Payment{}, apperr.Field("subscription", "%s ends with its trial: no charge is coming", x.ID)
		}
		// The first period, charged when the trial ends (a metered one
		// rates its usage at its end: none yet).
		start, end = x.period(0)
		if !x.Metered() {
			amount = *x.Amount
		}
	case x.Status == PastDue:
		amount, lines, start, end = *x.OutstandingAmount, x.OutstandingLines, *x.OutstandingStart, *x.OutstandingEnd
	case x.Metered():
		start, end = *x.CurrentPeriodStart, *x.CurrentPeriodEnd
		until := now
		if until.After(end) {
			until = end
		}
		q, err := usageSoFar(ctx, q, x, until)
		if err != nil {
			return wire.Payment{}, err
		}
		if amount, lines, err = rate(x, q); err != nil {
			return wire.Payment{}, err
		}
		if amount, lines, _, err = applyDiscount(x, x.PeriodIndex, amount, lines); err != nil {
			return wire.Payment{}, err
		}
	default:
		if x.CancelAt != nil && !x.CancelAt.After(*x.CurrentPeriodEnd) {
			return wire.Payment{}, apperr.Field("subscription", "%s ends with its period: no charge is coming", x.ID)
		}
		start, end = x.period(x.PeriodIndex + 1)
		if amount, lines, _, err = applyDiscount(x, x.PeriodIndex+1, *x.Amount, nil); err != nil {
			return wire.Payment{}, err
		}
	}
	return wire.Payment{
		Object: "upcoming_charge", Amount: amount.String(), Currency: "usdc", AmountRefunded: "0", SubscriptionID: &x.ID,
		CustomerID: x.CustomerID, Payer: x.Payer, Network: networkOf(x), PeriodStart: wire.OptTimestamp(&start),
		PeriodEnd: wire.OptTimestamp(&end), Lines: wire.StoredLines(lines), Livemode: x.Mode == tenant.Live,
	}, nil
}

func networkOf(x Subscription) string {
	if x.Mode == tenant.Test {
		return "test"
	}
	return "evm"
}

// Package subscriptions owns customers' subscriptions to plans: creation at
// checkout (Activate), the billing engine that renews, rates, retries
// (dunning), revokes and expires them (Biller), cancellation and the
// upcoming-charge preview, and the API's reads.
//
// A subscription copies its plan's terms at checkout and keeps its periods
// anchored on its start (calendar months: Jan 31 → Feb 28 → Mar 31). Its
// next_action_at says when the engine must next act, by the merchant's
// clock; every action is an operation that writes its payment, its state and
// its event in one transaction, with the rail charged first under a key
// derived from the subscription, the period and the attempt, so a crash
// between the two never charges twice.
package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/periods"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Statuses of a subscription.
const (
	Trialing = "trialing"
	Active   = "active"
	PastDue  = "past_due"
	Canceled = "canceled"
	Revoked  = "revoked"
	Expired  = "expired"
)

// Subscription is a customer's subscription to a plan.
type Subscription struct {
	MerchantID         string        `db:"merchant_id"`
	Mode               tenant.Mode   `db:"mode"`
	ID                 string        `db:"id"`
	Seq                int64         `db:"seq"`
	PlanID             string        `db:"plan_id"`
	ProductID          *string       `db:"product_id"`
	CustomerID         *string       `db:"customer_id"`
	Payer              *string       `db:"payer"`
	Status             string        `db:"status"`
	UsageType          *string       `db:"usage_type"`
	Amount             *money.Amount `db:"amount"`
	Interval           *string       `db:"interval"`
	IntervalDays       *int          `db:"interval_days"`
	MeterID            *string       `db:"meter_id"`
	PricingModel       []byte        `db:"pricing_model"`
	Anchor             *time.Time    `db:"anchor"`
	PeriodIndex        int           `db:"period_index"`
	CurrentPeriodStart *time.Time    `db:"current_period_start"`
	CurrentPeriodEnd   *time.Time    `db:"current_period_end"`
	CancelAt           *time.Time    `db:"cancel_at"`
	EndedAt            *time.Time    `db:"ended_at"`
	LatestPaymentID    *string       `db:"latest_payment_id"`
	NextActionAt       *time.Time    `db:"next_action_at"`
	FailedAt           *time.Time    `db:"failed_at"`
	Retries            int           `db:"retries"`
	OutstandingAmount  *money.Amount `db:"outstanding_amount"`
	OutstandingLines   []byte        `db:"outstanding_lines"`
	OutstandingStart   *time.Time    `db:"outstanding_start"`
	OutstandingEnd     *time.Time    `db:"outstanding_end"`
	AuthorizationKey   *string       `db:"authorization_key"`
	CreatedAt          time.Time     `db:"created_at"`
	// TrialEnd is when a trial ends and the first period starts (nil: no
	// trial).
	TrialEnd *time.Time `db:"trial_end"`
	// A plan change waiting for the period's end (change.go).
	PendingPlanID   *string    `db:"pending_plan_id"`
	PendingChangeAt *time.Time `db:"pending_change_at"`
	// AuthorizedAmount is what the payer authorized per period; nil until
	// the first change, while it is Amount.
	AuthorizedAmount *money.Amount `db:"authorized_amount"`
	// Changes counts immediate plan changes (the key of the next one's
	// proration charge).
	Changes int `db:"changes"`
	// DiscountJSON is the stored Discount (discount.go); nil for none.
	DiscountJSON []byte `db:"discount"`
}

const columns = `merchant_id, mode, id, seq, plan_id, product_id, customer_id, payer, status, usage_type, amount, interval, interval_days,
	meter_id, pricing_model, anchor, period_index, current_period_start, current_period_end, cancel_at, ended_at, latest_payment_id,
	next_action_at, failed_at, retries, outstanding_amount, outstanding_lines, outstanding_start, outstanding_end, authorization_key, created_at,
	pending_plan_id, pending_change_at, authorized_amount, changes, trial_end, discount`

// Columns is the select list of a Subscription, for a statement of another
// package that records one with more in one round trip (checkout).
const Columns = columns

// qualifiedColumns is columns on the alias s.
const qualifiedColumns = `s.merchant_id, s.mode, s.id, s.seq, s.plan_id, s.product_id, s.customer_id, s.payer, s.status, s.usage_type, s.amount, s.interval, s.interval_days, s.meter_id, s.pricing_model, s.anchor, s.period_index, s.current_period_start, s.current_period_end, s.cancel_at, s.ended_at, s.latest_payment_id, s.next_action_at, s.failed_at, s.retries, s.outstanding_amount, s.outstanding_lines, s.outstanding_start, s.outstanding_end, s.authorization_key, s.created_at, s.pending_plan_id, s.pending_change_at, s.authorized_amount, s.changes, s.trial_end, s.discount`

// Live reports whether the subscription can still be charged (a trialing
// one is, at its trial's end).
func (x Subscription) Live() bool {
	return x.Status == Trialing || x.Status == Active || x.Status == PastDue
}

// Metered reports whether it bills usage.
func (x Subscription) Metered() bool { return x.UsageType != nil && *x.UsageType == "metered" }

// Scope is the subscription's merchant and mode.
func (x Subscription) Scope() tenant.Scope {
	return tenant.Scope{MerchantID: x.MerchantID, Mode: x.Mode}
}

// Position is the subscription's place in the list, for cursors.
func (x Subscription) Position() page.Cursor { return page.Cursor{At: x.CreatedAt, Seq: x.Seq} }

// period returns the bounds of period n.
func (x Subscription) period(n int) (time.Time, time.Time) {
	days := 0
	if x.IntervalDays != nil {
		days = *x.IntervalDays
	}
	return periods.Period(*x.Anchor, *x.Interval, days, n)
}

// Wire returns the subscription's public form.
func (x Subscription) Wire() wire.Subscription {
	w := wire.Subscription{
		Object: "subscription", ID: x.ID, Status: x.Status, PlanID: x.PlanID, ProductID: x.ProductID, CustomerID: x.CustomerID,
		Payer: x.Payer, UsageType: x.UsageType, Interval: x.Interval, IntervalDays: x.IntervalDays, Meter: x.MeterID,
		PricingModel: wire.StoredPricing(x.PricingModel), CurrentPeriodStart: wire.OptTimestamp(x.CurrentPeriodStart),
		CurrentPeriodEnd: wire.OptTimestamp(x.CurrentPeriodEnd), CancelAt: wire.OptTimestamp(x.CancelAt), EndedAt: wire.OptTimestamp(x.EndedAt),
		LatestPaymentID: x.LatestPaymentID, CreatedAt: wire.Timestamp(x.CreatedAt), Livemode: x.Mode == tenant.Live,
		PendingPlanID: x.PendingPlanID, PendingChangeAt: wire.OptTimestamp(x.PendingChangeAt), TrialEnd: wire.OptTimestamp(x.TrialEnd),
	}
	if x.Amount != nil {
		a := x.Amount.String()
		w.Amount = &a
	}
	if d, err := x.StoredDiscount(); err == nil && d != nil {
		w.Discount = d.Wire()
	}
	return w
}

// List returns a page of the scope's subscriptions, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Subscription], error) {
	return page.Select(ctx, q, "subscriptions", columns, s, p, Subscription.Position)
}

// Get returns the scope's subscription with id; unknown is
// resource_not_found.
func Get(ctx context.Context, q store.Querier, s tenant.Scope, subscriptionID string) (Subscription, error) {
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND id = $3`, s.MerchantID, s.Mode, subscriptionID)
	if err != nil {
		return Subscription{}, store.Translate(err)
	}
	if len(xs) == 0 {
		return Subscription{}, apperr.New(apperr.ResourceNotFound, "no subscription %q", subscriptionID)
	}
	return xs[0], nil
}

// ByID returns the subscription with id in any merchant and mode (checkout
// receipts; ids are unguessable); ok=false when there is none.
func ByID(ctx context.Context, q store.Querier, subscriptionID string) (Subscription, bool, error) {
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE id = $1`, subscriptionID)
	if err != nil || len(xs) == 0 {
		return Subscription{}, false, store.Translate(err)
	}
	return xs[0], true, nil
}

// lock returns the scope's subscription locked FOR UPDATE in tx.
func lock(ctx context.Context, tx *store.Tx, s tenant.Scope, subscriptionID string) (Subscription, error) {
	var xs []Subscription
	err := tx.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND id = $3 FOR UPDATE`,
		s.MerchantID, s.Mode, subscriptionID)
	if err != nil {
		return Subscription{}, store.Translate(err)
	}
	if len(xs) == 0 {
		return Subscription{}, apperr.New(apperr.ResourceNotFound, "no subscription %q", subscriptionID)
	}
	return xs[0], nil
}

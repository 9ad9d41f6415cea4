package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
)

// ActivateInput is a checkout of a plan whose activation the rail settled.
type ActivateInput struct {
	Plan       plans.Plan
	CustomerID string
	Payer      string
	// Activation is the rail's succeeded activation: the authorization
	// later charges draw on, with the first period's charge for a licensed
	// plan (amount 0 for a metered one).
	Activation rail.Settlement
	// UsageGrace delays a metered period's rating past its end.
	UsageGrace time.Duration
	Now        time.Time
	// Trial starts the subscription trialing for the plan's trial_days
	// (the activation charged nothing; see TrialFor).
	Trial bool
	// Coupon is the coupon redeemed at checkout (nil for none): the
	// subscription starts with its discount, which covers the first charge
	// on (see FirstCharge).
	Coupon *coupons.Coupon
}

// NewActivation is the subscription a checkout creates, as it is stored
// (its first period starting at in.Now), and a licensed plan's first
// payment, which the subscription points at (nil for a metered plan: its
// checkout only authorizes).
func NewActivation(in ActivateInput) (x Subscription, first *payments.Payment) {
	p := in.Plan
	s := p.Scope()
	now := in.Now.Truncate(time.Microsecond)
	x = Subscription{MerchantID: s.MerchantID, Mode: s.Mode, ID: id.New("sub"), PlanID: p.ID, ProductID: &p.ProductID,
		CustomerID: &in.CustomerID, Payer: &in.Payer, Status: Active, UsageType: &p.UsageType, Amount: &p.Amount,
		Interval: &p.Interval, IntervalDays: p.IntervalDays, MeterID: p.MeterID, PricingModel: p.PricingJSON, Anchor: &now,
		AuthorizationKey: &in.Activation.Key, CreatedAt: now}
	start, end := x.period(0)
	next := end
	if p.UsageType == plans.Metered {
		next = end.Add(in.UsageGrace)
	}
	x.CurrentPeriodStart, x.CurrentPeriodEnd, x.NextActionAt = &start, &end, &next
	if in.Trial && p.TrialDays != nil {
		startTrial(&x, *p.TrialDays)
		x.startDiscount(in.Coupon, now) // it covers the first period, charged at trial_end
		return x, nil
	}
	lines := x.startDiscount(in.Coupon, now)
	// The first charge's payment is made up front, so the subscription is
	// stored pointing at it: one statement fewer than an update after.
	if in.Activation.Amount > 0 {
		pay := payments.FromSettlement(s, in.Activation)
		pay.SubscriptionID, pay.CustomerID, pay.PeriodStart, pay.PeriodEnd = &x.ID, x.CustomerID, x.CurrentPeriodStart, x.CurrentPeriodEnd
		pay.Lines = lines
		first, x.LatestPaymentID = &pay, &pay.ID
	}
	return x, first
}

func nullJSON(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// ActivationIndex counts the customer's earlier subscriptions to the plan:
// the activation key of a checkout includes it, so a checkout retried after
// a crash settles under the same key, and a later resubscription under a
// new one.
func ActivationIndex(ctx context.Context, q store.Querier, p plans.Plan, customerID string) (int, error) {
	var n int
	err := q.GetContext(ctx, &n, `SELECT count(*) FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3 AND customer_id = $4`,
		p.MerchantID, p.Mode, p.ID, customerID)
	return n, store.Translate(err)
}

// LiveFor returns the customer's live subscription to the plan, if any.
func LiveFor(ctx context.Context, q store.Querier, p plans.Plan, customerID string) (Subscription, bool, error) {
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3
		AND customer_id = $4 AND status IN ('trialing', 'active', 'past_due')`, p.MerchantID, p.Mode, p.ID, customerID)
	if err != nil || len(xs) == 0 {
		return Subscription{}, false, store.Translate(err)
	}
	return xs[0], true, nil
}

package subscriptions

import (
	"context"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
)

// saveTermsSQL writes the plan terms and pending change of many
// subscriptions in one statement (the rows are locked by the caller).
const saveTermsSQL = `UPDATE subscriptions s SET plan_id = v.plan_id, product_id = v.product_id, amount = v.amount,
		interval = v.interval, interval_days = v.interval_days, meter_id = v.meter_id, pricing_model = v.pricing_model,
		anchor = v.anchor, period_index = v.period_index, pending_plan_id = v.pending_plan_id, pending_change_at = v.pending_change_at,
		authorized_amount = v.authorized_amount, changes = v.changes, latest_payment_id = v.latest_payment_id
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::int[], $8::text[], $9::jsonb[],
		$10::timestamptz[], $11::int[], $12::text[], $13::timestamptz[], $14::numeric[], $15::int[], $16::text[])
		AS v(merchant_id, id, plan_id, product_id, amount, interval, interval_days, meter_id, pricing_model, anchor, period_index,
			pending_plan_id, pending_change_at, authorized_amount, changes, latest_payment_id)
	WHERE s.merchant_id = v.merchant_id AND s.id = v.id
	RETURNING ` + qualifiedColumns

// saveTerms stores the plan terms and pending changes of subscriptions
// locked in tx.
func saveTerms(ctx context.Context, tx *store.Tx, xs ...Subscription) ([]Subscription, error) {
	n := len(xs)
	merchants, ids, planIDs := make([]string, n), make([]string, n), make([]string, n)
	products, amounts, intervals, meters, models := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	days, idx, changes := make([]*string, n), make([]int64, n), make([]int64, n)
	anchors, pendings, pendingAt, authorized, latest := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	for i, x := range xs {
		merchants[i], ids[i], planIDs[i], idx[i], changes[i] = x.MerchantID, x.ID, x.PlanID, int64(x.PeriodIndex), int64(x.Changes)
		products[i], intervals[i], meters[i], models[i] = x.ProductID, x.Interval, x.MeterID, nullJSON(x.PricingModel)
		amounts[i], authorized[i] = optAmount(x.Amount), optAmount(x.AuthorizedAmount)
		if x.IntervalDays != nil {
			d := strconv.Itoa(*x.IntervalDays)
			days[i] = &d
		}
		anchors[i], pendings[i], pendingAt[i], latest[i] = optTime(x.Anchor), x.PendingPlanID, optTime(x.PendingChangeAt), x.LatestPaymentID
	}
	var out []Subscription
	err := tx.SelectContext(ctx, &out, saveTermsSQL, pq.StringArray(merchants), pq.StringArray(ids), pq.StringArray(planIDs),
		store.NullTexts(products), store.NullTexts(amounts), store.NullTexts(intervals), store.NullTexts(days), store.NullTexts(meters),
		store.NullTexts(models), store.NullTexts(anchors), pq.Int64Array(idx), store.NullTexts(pendings), store.NullTexts(pendingAt),
		store.NullTexts(authorized), pq.Int64Array(changes), store.NullTexts(latest))
	return out, store.Translate(err)
}

// switchFeatures ends the features the subscription's grants gave and
// grants the plan's at `at`.
func switchFeatures(ctx context.Context, tx *store.Tx, x Subscription, p plans.Plan, at time.Time) error {
	s := x.Scope()
	if err := entitlements.EndSubscriptionGrants(ctx, tx, s, x.ID, at); err != nil {
		return err
	}
	for _, f := range p.Features() {
		if _, err := entitlements.GrantTx(ctx, tx, s, entitlements.GrantInput{FeatureKey: f.Key, Customer: customers.Ref{ID: x.CustomerID},
			Limit: f.Limit, StartsAt: &at, Source: entitlements.SourcePlan, SubscriptionID: &x.ID}, at); err != nil {
			return err
		}
	}
	return nil
}

func optAmount(a *money.Amount) *string {
	if a == nil {
		return nil
	}
	s := a.String()
	return &s
}

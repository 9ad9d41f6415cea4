package subscriptions

import (
	"context"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
)

// pendingPlans reads, in one query, the plans that the claimed active
// subscriptions' pending changes move them to as their next period starts.
// A change the customer cannot take any more (they subscribed to that plan
// meanwhile: one live subscription per customer and plan) stays pending and
// is left out.
func pendingPlans(ctx context.Context, tx *store.Tx, xs []Subscription) (map[string]*plans.Plan, error) {
	var ids, merchants, modes, custs, planIDs []string
	for _, x := range xs {
		if x.PendingPlanID == nil || !(x.Status == Active || trialEnding(x)) {
			continue
		}
		ids, merchants, modes = append(ids, x.ID), append(merchants, x.MerchantID), append(modes, string(x.Mode))
		custs, planIDs = append(custs, deref(x.CustomerID)), append(planIDs, *x.PendingPlanID)
	}
	out := map[string]*plans.Plan{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		SubscriptionID string `db:"subscription_id"`
		plans.Plan
	}
	err := tx.SelectContext(ctx, &rows, `SELECT b.id AS subscription_id, `+plans.Columns+`
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS b(id, merchant_id, mode, customer_id, plan_id)
		JOIN plans p ON p.merchant_id = b.merchant_id AND p.mode = b.mode AND p.id = b.plan_id
		JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		WHERE NOT EXISTS (SELECT 1 FROM subscriptions o WHERE o.merchant_id = b.merchant_id AND o.mode = b.mode
			AND o.plan_id = b.plan_id AND o.customer_id = b.customer_id AND o.status IN ('trialing', 'active', 'past_due'))`,
		pq.StringArray(ids), pq.StringArray(merchants), pq.StringArray(modes), pq.StringArray(custs), pq.StringArray(planIDs))
	if err != nil {
		return nil, store.Translate(err)
	}
	for i := range rows {
		out[rows[i].SubscriptionID] = &rows[i].Plan
	}
	return out, nil
}

// adopt plans the pending change's terms for the period about to start.
func (a *action) adopt(next *plans.Plan) {
	if next == nil {
		return
	}
	a.after.adopt(*next, *a.x.CurrentPeriodEnd)
	a.next = next
}

// applyChanges stores the plan terms of the actions whose pending change
// took effect (not those left as they were: a charge still pending, an
// authorization revoked) and switches their features as the period starts;
// it returns them by id.
func (b *Biller) applyChanges(ctx context.Context, tx *store.Tx, actions []*action) (map[string]bool, error) {
	var xs []Subscription
	var taken []*action
	for _, a := range actions {
		if a.next != nil && a.after.PlanID == a.next.ID {
			xs, taken = append(xs, a.after), append(taken, a)
		}
	}
	changed := map[string]bool{}
	if len(xs) == 0 {
		return changed, nil
	}
	if _, err := saveTerms(ctx, tx, xs...); err != nil {
		return nil, err
	}
	for _, a := range taken {
		if err := switchFeatures(ctx, tx, a.after, *a.next, *a.x.CurrentPeriodEnd); err != nil {
			return nil, err
		}
		changed[a.x.ID] = true
	}
	return changed, nil
}

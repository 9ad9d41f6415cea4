// Package subscriptions owns customers' subscriptions to plans. The
// subscriptions issue fills it; the API lists them.
package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Subscription is a customer's subscription to a plan.
type Subscription struct {
	MerchantID         string      `db:"merchant_id"`
	Mode               tenant.Mode `db:"mode"`
	ID                 string      `db:"id"`
	Seq                int64       `db:"seq"`
	PlanID             string      `db:"plan_id"`
	CustomerID         *string     `db:"customer_id"`
	Status             string      `db:"status"`
	CurrentPeriodStart *time.Time  `db:"current_period_start"`
	CurrentPeriodEnd   *time.Time  `db:"current_period_end"`
	CreatedAt          time.Time   `db:"created_at"`
}

const columns = `merchant_id, mode, id, seq, plan_id, customer_id, status, current_period_start, current_period_end, created_at`

// List returns a page of the scope's subscriptions, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Subscription], error) {
	return page.Select(ctx, q, "subscriptions", columns, s, p, Subscription.Position)
}

// Position is the subscription's place in the list, for cursors.
func (x Subscription) Position() page.Cursor { return page.Cursor{At: x.CreatedAt, Seq: x.Seq} }

// Wire returns the subscription's public form.
func (x Subscription) Wire() wire.Subscription {
	return wire.Subscription{
		Object: "subscription", ID: x.ID, PlanID: x.PlanID, CustomerID: x.CustomerID, Status: x.Status,
		CurrentPeriodStart: wire.OptTimestamp(x.CurrentPeriodStart), CurrentPeriodEnd: wire.OptTimestamp(x.CurrentPeriodEnd),
		CreatedAt: wire.Timestamp(x.CreatedAt), Livemode: x.Mode == tenant.Live,
	}
}

package subscriptions

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// ListForCustomer returns a page of the scope's subscriptions of customerID,
// newest first, with List's cursor semantics. An unknown customer has none.
func ListForCustomer(ctx context.Context, q store.Querier, s tenant.Scope, customerID string, p page.Params) (page.Result[Subscription], error) {
	where, args := p.Where(4)
	rows := []Subscription{}
	err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM subscriptions
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND `+where+` `+p.Order(),
		append([]any{s.MerchantID, s.Mode, customerID}, args...)...)
	if err != nil {
		return page.Result[Subscription]{}, store.Translate(err)
	}
	return page.Build(rows, p, Subscription.Position), nil
}

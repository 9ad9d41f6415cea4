package subscriptions

import (
	"context"
	"strings"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// LiveOfPayer returns the scope's newest active or past-due subscription
// to planID paid from payer (a wallet address, any case): the one a
// customer who connects that wallet on the plan's page means; ok=false when
// there is none.
func LiveOfPayer(ctx context.Context, q store.Querier, s tenant.Scope, planID, payer string) (Subscription, bool, error) {
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3
		AND lower(payer) = $4 AND status IN ('trialing', 'active', 'past_due') ORDER BY created_at DESC LIMIT 1`,
		s.MerchantID, s.Mode, planID, strings.ToLower(payer))
	if err != nil || len(xs) == 0 {
		return Subscription{}, false, store.Translate(err)
	}
	return xs[0], true, nil
}

package subscriptions

import (
	"context"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/rail"
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

// ReplaceTestPayer makes payer (a test wallet) pay the scope's live
// test-mode subscription from its next charge on, in a transaction of its
// own: test mode's stand-in for a payer authorizing anew at the live
// checkout. Fails with resource_not_found, or invalid_request when the
// scope is live, the subscription has ended, or payer is not a test
// wallet.
func ReplaceTestPayer(ctx context.Context, db *store.DB, s tenant.Scope, subscriptionID, payer string) (Subscription, error) {
	if s.Mode != tenant.Test {
		return Subscription{}, apperr.Field("payer", "can be replaced here in test mode only; a live payer authorizes at the checkout")
	}
	payer, err := rail.CheckTestPayer(payer)
	if err != nil {
		return Subscription{}, err
	}
	return store.InTx(ctx, db, func(tx *store.Tx) (Subscription, error) {
		x, err := lock(ctx, tx, s, subscriptionID)
		if err != nil {
			return Subscription{}, err
		}
		if !x.Live() {
			return Subscription{}, apperr.Field("subscription", "%s is %s already", x.ID, x.Status)
		}
		var out Subscription
		err = tx.GetContext(ctx, &out, `UPDATE subscriptions SET payer = $4 WHERE merchant_id = $1 AND mode = $2 AND id = $3 RETURNING `+columns,
			s.MerchantID, s.Mode, x.ID, payer)
		return out, store.Translate(err)
	})
}

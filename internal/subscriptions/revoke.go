package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// RevokeByAuthorizationTx ends, in tx, the scope's live subscriptions that
// draw on the rail authorization with key authorizationKey, because the
// payer revoked it (on chain: PlanRevoked, or the allowance dropped to
// zero): each becomes revoked at `at` with subscription.revoked, its
// entitlements follow, and it is never charged again. Subscriptions
// already ended are left as they are, so a revocation seen twice changes
// nothing. It returns the subscriptions it revoked.
func RevokeByAuthorizationTx(ctx context.Context, tx *store.Tx, s tenant.Scope, authorizationKey string, at time.Time) ([]Subscription, error) {
	var xs []Subscription
	if err := tx.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2
		AND authorization_key = $3 AND status IN ('trialing', 'active', 'past_due') FOR UPDATE`, s.MerchantID, s.Mode, authorizationKey); err != nil {
		return nil, store.Translate(err)
	}
	if len(xs) == 0 {
		return nil, nil
	}
	at = at.Truncate(time.Microsecond)
	for i := range xs {
		xs[i].Status, xs[i].EndedAt, xs[i].NextActionAt = Revoked, &at, nil
	}
	saved, err := save(ctx, tx, xs...)
	if err != nil {
		return nil, err
	}
	for _, x := range saved {
		if err := entitlements.FollowSubscription(ctx, tx, s, x.ID, entitlements.FollowRevoked, at, time.Time{}); err != nil {
			return nil, err
		}
		if _, err := events.Emit(ctx, tx, s, events.SubscriptionRevoked, at, x.Wire()); err != nil {
			return nil, err
		}
	}
	return saved, nil
}

// ByAuthorization returns the scope's newest subscription drawing on the
// rail authorization with key authorizationKey (the live checkout's receipt
// finds the subscription its activation created); ok=false when none does.
func ByAuthorization(ctx context.Context, q store.Querier, s tenant.Scope, authorizationKey string) (Subscription, bool, error) {
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND authorization_key = $3
		ORDER BY created_at DESC LIMIT 1`, s.MerchantID, s.Mode, authorizationKey)
	if err != nil || len(xs) == 0 {
		return Subscription{}, false, store.Translate(err)
	}
	return xs[0], true, nil
}

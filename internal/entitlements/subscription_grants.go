package entitlements

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// EndSubscriptionGrants revokes, at `at`, the grants a subscription's plan
// made and the entitlements they still are: its plan changed, and the new
// plan's features are granted anew. A revoked grant no longer follows the
// subscription (FollowSubscription skips it), so a feature the new plan
// lacks stays gone whatever the subscription does next.
func EndSubscriptionGrants(ctx context.Context, tx *store.Tx, s tenant.Scope, subscriptionID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `WITH g AS (
			UPDATE entitlement_grants SET revoked_at = $4
			WHERE merchant_id = $1 AND mode = $2 AND subscription_id = $3 AND revoked_at IS NULL RETURNING merchant_id, id
		) UPDATE entitlements e SET revoked_at = $4, updated_at = now() FROM g
		WHERE e.merchant_id = g.merchant_id AND e.mode = $2 AND e.grant_id = g.id`, s.MerchantID, s.Mode, subscriptionID, at)
	return store.Translate(err)
}

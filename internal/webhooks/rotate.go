package webhooks

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
)

// DefaultOverlap is how long a rotated-out secret keeps signing deliveries.
const DefaultOverlap = 24 * time.Hour

// RotateSecret gives the endpoint a new whsec_ secret and returns it (shown
// once). For overlap, deliveries carry two v1 signatures, with the new and
// the previous secret, so receivers can switch without rejecting any; an
// overlap of 0 retires the previous secret at once. Rotating again during an
// overlap retires the oldest secret. Unknown or removed endpoints are
// invalid_request; a negative overlap is invalid_request.
func RotateSecret(ctx context.Context, q store.Querier, endpointID string, overlap time.Duration) (Endpoint, error) {
	if overlap < 0 {
		return Endpoint{}, apperr.Field("overlap", "must not be negative")
	}
	var e Endpoint
	err := q.GetContext(ctx, &e, `UPDATE webhook_endpoints SET previous_secret = secret, secret = $2,
			previous_secret_expires_at = now() + $3 * interval '1 microsecond'
		WHERE id = $1 AND removed_at IS NULL RETURNING `+columns, endpointID, NewSecret(), overlap.Microseconds())
	if store.NotFound(err) {
		return Endpoint{}, apperr.Field("endpoint", "no webhook endpoint %q", endpointID)
	}
	return e, store.Translate(err)
}

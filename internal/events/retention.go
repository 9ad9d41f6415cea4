package events

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// DefaultRetention is how long events are kept: SPEC.md's consumers page
// GET /v1/events to catch up after an outage, so at least 30 days.
const DefaultRetention = 30 * 24 * time.Hour

// pruneLock is the advisory lock key that lets one replica prune at a time.
const pruneLock = 0x746f6c6c70727565 // "tollprue"

// Prune deletes up to limit events (of every merchant) created more than
// retention ago, with their webhook deliveries and attempts, and returns how
// many it deleted. It returns 0 at once when another replica is pruning.
func Prune(ctx context.Context, q store.Querier, retention time.Duration, limit int) (int64, error) {
	var n int64
	err := q.GetContext(ctx, &n, `WITH gone AS (
			DELETE FROM events WHERE pg_try_advisory_xact_lock($3) AND (merchant_id, id) IN (
				SELECT merchant_id, id FROM events WHERE created_at < now() - $1 * interval '1 microsecond'
				ORDER BY created_at LIMIT $2)
			RETURNING 1
		) SELECT count(*) FROM gone`, retention.Microseconds(), limit, int64(pruneLock))
	return n, store.Translate(err)
}

package events

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// DefaultRetention is how long events are kept: consumers page
// GET /v1/events to catch up after an outage, and are promised 30 days.
const DefaultRetention = 30 * 24 * time.Hour

// Prune deletes up to limit events (of every merchant) positioned in the
// feed more than retention before now, oldest first, with their webhook
// deliveries and attempts, and returns how many it deleted. The daemon runs
// it as a periodic job (one replica per run).
func Prune(ctx context.Context, q store.Querier, retention time.Duration, limit int, now time.Time) (int64, error) {
	var n int64
	err := q.GetContext(ctx, &n, `WITH gone AS (
			DELETE FROM events WHERE (merchant_id, id) IN (
				SELECT merchant_id, id FROM events WHERE created_at < $3::timestamptz - $1 * interval '1 microsecond'
				ORDER BY created_at LIMIT $2)
			RETURNING 1
		) SELECT count(*) FROM gone`, retention.Microseconds(), limit, now)
	return n, store.Translate(err)
}

package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Position returns where the scope's event eventID sits in the feed, for
// listing the events after it. An unknown id is invalid_request naming
// field.
func Position(ctx context.Context, q store.Querier, s tenant.Scope, field, eventID string) (page.Cursor, error) {
	var pos page.Cursor
	err := q.QueryRowxContext(ctx, `SELECT created_at, seq FROM events WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
		s.MerchantID, s.Mode, eventID).Scan(&pos.At, &pos.Seq)
	if store.NotFound(err) {
		return page.Cursor{}, apperr.Field(field, "no event %q", eventID)
	}
	return pos, store.Translate(err)
}

// ParseAfter reads an `after` value: an event id (evt_…), resolved with
// Position, or a date-time cursor (a plain date-time means "at or after that
// instant"). Anything else is invalid_request naming `after`.
func ParseAfter(ctx context.Context, q store.Querier, s tenant.Scope, v string) (page.Cursor, error) {
	if strings.HasPrefix(v, "evt_") {
		return Position(ctx, q, s, "after", v)
	}
	c, err := page.ParseCursor(v)
	if err != nil {
		return page.Cursor{}, apperr.Field("after", "must be an event id (evt_…) or a date-time such as a list's next_cursor")
	}
	return c, nil
}

// WorkerApplicationName is what delivery workers SET LOCAL application_name
// to while they hold a transaction open for an HTTP request: such
// transactions emit no events, so ListAfter need not wait for them.
const WorkerApplicationName = "tollgate-delivery-worker"

// settleLimit bounds how long ListAfter waits for open transactions.
const settleLimit = 5 * time.Second

// ListAfter returns up to limit of the scope's events positioned after c,
// oldest first: the direction a tail reads in. HasMore says more follow;
// Next is then the last item's position, to pass as the next `after`.
//
// An event's position is its transaction's start (created_at), not its
// commit, so an event can commit after later-positioned ones were read. To
// let a reader advance past what it has seen without ever missing one,
// ListAfter returns only events positioned before every transaction still
// open on the database (other than delivery workers' and its own), waiting
// at most settleLimit for a long one.
func ListAfter(ctx context.Context, q store.Querier, s tenant.Scope, c page.Cursor, limit int) (page.Result[Event], error) {
	rows := []Event{}
	err := q.SelectContext(ctx, &rows, fmt.Sprintf(`WITH horizon AS (
			SELECT CASE WHEN min(xact_start) IS NULL THEN clock_timestamp()
				ELSE least(clock_timestamp(), greatest(min(xact_start), clock_timestamp() - $5 * interval '1 microsecond')) END AS at
			FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
				AND backend_type = 'client backend' AND application_name <> $6
		)
		SELECT `+columns+` FROM events, horizon
		WHERE merchant_id = $1 AND mode = $2 AND (created_at, seq) > ($3, $4) AND created_at < horizon.at
		ORDER BY created_at, seq LIMIT %d`, limit+1),
		s.MerchantID, s.Mode, c.At, c.Seq, settleLimit.Microseconds(), WorkerApplicationName)
	if err != nil {
		return page.Result[Event]{}, store.Translate(err)
	}
	return page.Build(rows, page.Params{Limit: limit}, Event.Position), nil
}

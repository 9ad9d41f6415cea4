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
	err := q.QueryRowxContext(ctx, `SELECT `+feedTime(s)+`, seq FROM events WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
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
// An event's insertion time is its transaction's start (created_at), not
// its commit, so an event can commit after later-positioned ones were read.
// To let a reader advance past what it has seen without ever missing one,
// ListAfter returns only events inserted before every transaction still
// open on the database (other than delivery workers' and its own), waiting
// at most settleLimit for a long one. Test mode's feed, ordered by the
// merchant's clock, also holds back events stamped later than that horizon
// by the clock: those of a test-clock advance still running, which the
// clock shows only once all of its work is done.
func ListAfter(ctx context.Context, q store.Querier, s tenant.Scope, c page.Cursor, limit int) (page.Result[Event], error) {
	rows := []Event{}
	err := q.SelectContext(ctx, &rows, afterSQL(s, limit),
		s.MerchantID, s.Mode, c.At, c.Seq, settleLimit.Microseconds(), WorkerApplicationName)
	if err != nil {
		return page.Result[Event]{}, store.Translate(err)
	}
	return page.Build(rows, page.Params{Limit: limit}, Event.Position), nil
}

// afterSQL is ListAfter's statement: $1 the merchant, $2 the mode, $3 and
// $4 the cursor, $5 settleLimit in microseconds, $6 the delivery workers'
// application name.
func afterSQL(s tenant.Scope, limit int) string {
	at := feedTime(s)
	return fmt.Sprintf(`WITH horizon AS (
			SELECT CASE WHEN min(xact_start) IS NULL THEN clock_timestamp()
				ELSE least(clock_timestamp(), greatest(min(xact_start), clock_timestamp() - $5 * interval '1 microsecond')) END AS at,
				(SELECT coalesce(max(ahead_us), 0) FROM test_clocks WHERE merchant_id = $1) AS ahead_us
			FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
				AND backend_type = 'client backend' AND application_name <> $6
		)
		SELECT `+columns+` FROM events, horizon
		WHERE %[3]s AND (%[1]s, seq) > ($3, $4) AND created_at < horizon.at
			AND ($2 <> 'test' OR occurred_at < horizon.at + horizon.ahead_us * interval '1 microsecond')
		ORDER BY %[1]s, seq LIMIT %[2]d`, at, limit+1, feedScope(s))
}

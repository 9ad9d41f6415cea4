package metering

import (
	"context"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A usage window holds the running aggregates (count, sum, max, last) of
// one customer's events on one meter with event_timestamp >= Since, for an
// owner (an entitlement names it by feature id). Ingestion updates every
// window an event falls in, in the event's transaction, so reading usage is
// one row however many events there are; late events older than Since never
// count.
//
// Creating a window reads the events already stored. To keep a concurrent
// ingestion from slipping between that read and the window's commit,
// ingestion holds a per-scope advisory lock in shared mode from before it
// resolves customers until it commits, and TrackWindow takes it exclusively:
// window creation (a grant; rare and short) waits for in-flight batches, and
// batches for that merchant and mode wait for it.

// usageLockSpace is the first key of the two-key advisory locks on usage
// ("tg"); the second is a hash of the scope.
const usageLockSpace = 0x7467

// LockUsage takes the scope's usage lock exclusively until the end of the
// transaction q. TrackWindow takes it itself; a caller that must write rows
// ingestion may also write (a customer upserted by external id) calls it
// first, so it never holds such a row while waiting for the lock.
func LockUsage(ctx context.Context, q store.Querier, s tenant.Scope) error {
	return lockUsage(ctx, q, s, true)
}

func lockUsage(ctx context.Context, q store.Querier, s tenant.Scope, exclusive bool) error {
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	_, err := q.ExecContext(ctx, `SELECT `+fn+`($1::int, hashtext($2))`, usageLockSpace, usageLockKey(s))
	return store.Translate(err)
}

// usageLockKey is hashed into the lock's second key.
func usageLockKey(s tenant.Scope) string { return s.MerchantID + "/" + string(s.Mode) }

// Window is a usage window's aggregates.
type Window struct {
	Since  time.Time  `db:"since"`
	Count  int64      `db:"event_count"`
	Sum    string     `db:"value_sum"` // numeric: may exceed int64
	Max    *int64     `db:"value_max"`
	Last   *int64     `db:"last_value"`
	LastAt *time.Time `db:"last_at"`
}

// Used returns the usage under a meter's aggregation as a decimal string:
// the sum, the number of events, the greatest value, or the value of the
// latest event (by event_timestamp); "0" when there are no events.
func (w Window) Used(aggregation string) string {
	switch aggregation {
	case Count:
		return strconv.FormatInt(w.Count, 10)
	case Max:
		if w.Max != nil {
			return strconv.FormatInt(*w.Max, 10)
		}
	case Last:
		if w.Last != nil {
			return strconv.FormatInt(*w.Last, 10)
		}
	default:
		if w.Sum != "" {
			return w.Sum
		}
	}
	return "0"
}

// upsertWindowSQL creates owner's window with the given aggregates, or
// replaces them when its start moved.
const upsertWindowSQL = `
INSERT INTO usage_windows (merchant_id, mode, customer_id, meter_id, owner, since, event_count, value_sum, value_max, last_value, last_at, last_event_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (merchant_id, mode, customer_id, meter_id, owner) DO UPDATE SET
	since = EXCLUDED.since, event_count = EXCLUDED.event_count, value_sum = EXCLUDED.value_sum, value_max = EXCLUDED.value_max,
	last_value = EXCLUDED.last_value, last_at = EXCLUDED.last_at, last_event_id = EXCLUDED.last_event_id, updated_at = now()
WHERE usage_windows.since <> EXCLUDED.since`

// windowAggregates returns, for each start in sinces, the aggregates of the
// customer's uncancelled events on the meter from that start on, read from
// the buckets (AggregateMany): a window over a long span costs a bounded
// read, and counts the events of periods whose rows retention dropped.
func windowAggregates(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string, sinces []time.Time) ([]Agg, error) {
	// Past any event a request may carry, even under a test clock.
	end := time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
	spans := make([]Span, len(sinces))
	for i, since := range sinces {
		spans[i] = Span{Scope: s, CustomerID: customerID, MeterID: meterID, From: since, To: end}
	}
	return AggregateMany(ctx, q, spans)
}

// windowValues are an Agg as usage_windows' columns: event_count,
// value_sum, value_max, last_value, last_at, last_event_id.
func windowValues(a Agg) []any {
	sum, lastAt, lastID := "0", (*time.Time)(nil), (*string)(nil)
	if a.Sum != nil {
		sum = a.Sum.String()
	}
	if a.Last != nil {
		lastAt, lastID = &a.LastAt, &a.LastID
	}
	return []any{a.Count, sum, a.Max, a.Last, lastAt, lastID}
}

// TrackWindow makes owner's window of the customer's usage on the meter
// start at since: a new window, or one whose start moved, is computed from
// the usage already stored (from the buckets: a bounded read); an unchanged
// one is left alone. q must be a transaction, and TrackWindow
// should come before the transaction takes row locks that ingestion could
// wait on: it waits for in-flight ingestion of the scope to commit.
func TrackWindow(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID, owner string, since time.Time) error {
	since = since.Truncate(time.Microsecond)
	if err := lockUsage(ctx, q, s, true); err != nil {
		return err
	}
	var cur []time.Time
	err := q.SelectContext(ctx, &cur, `SELECT since FROM usage_windows WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND owner = $5`,
		s.MerchantID, s.Mode, customerID, meterID, owner)
	if err != nil {
		return store.Translate(err)
	}
	if len(cur) == 1 && cur[0].Equal(since) {
		return nil
	}
	aggs, err := windowAggregates(ctx, q, s, customerID, meterID, []time.Time{since})
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, upsertWindowSQL, append([]any{s.MerchantID, s.Mode, customerID, meterID, owner, since}, windowValues(aggs[0])...)...)
	return store.Translate(err)
}

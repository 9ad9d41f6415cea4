package metering

import (
	"context"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// billedSQL is true when the event lies in a period already rated for a
// metered subscription of its customer on its meter: a period before the
// current one, or the last one of a subscription that ended (ending rates
// it).
const billedSQL = `SELECT EXISTS (SELECT 1 FROM subscriptions
	WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND usage_type = 'metered'
		AND current_period_start IS NOT NULL AND $5::timestamptz >= coalesce(anchor, created_at)
		AND ($5::timestamptz < current_period_start OR (ended_at IS NOT NULL AND $5::timestamptz < current_period_end)))`

// Cancel marks the scope's meter event eventID cancelled at now, so it
// counts nowhere from then on (usage summaries, entitlement usage, rating,
// upcoming charges, alerts), and emits meter_event.cancelled, in one
// transaction. Cancelling a cancelled event answers it again, with no new
// event. An unknown id is 404 resource_not_found; an event in a period
// already rated is 409 usage_already_billed.
func Cancel(ctx context.Context, db *store.DB, s tenant.Scope, eventID string, now time.Time) (Event, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Event, error) {
		return CancelTx(ctx, tx, s, eventID, now)
	})
}

// CancelTx is Cancel inside the caller's transaction, for a request whose
// Idempotency-Key is recorded with the cancel.
func CancelTx(ctx context.Context, tx *store.Tx, s tenant.Scope, eventID string, now time.Time) (Event, error) {
	if p := fields.TextProblem(eventID); p != "" {
		return Event{}, apperr.Field("id", "%s", p)
	}
	if len(eventID) > 255 {
		return Event{}, notFound(eventID)
	}
	e, err := eventByID(ctx, tx, s, eventID, false)
	if err != nil || e.CancelledAt != nil {
		return e, err
	}
	if e.CustomerID != nil {
		// Before the row lock: ingestion holds this lock shared while it
		// writes buckets, and must not add to them while they are rebuilt.
		if err := LockUsage(ctx, tx, s); err != nil {
			return Event{}, err
		}
	}
	if e, err = eventByID(ctx, tx, s, eventID, true); err != nil || e.CancelledAt != nil {
		return e, err
	}
	if e.CustomerID != nil {
		var billed bool
		if err := tx.GetContext(ctx, &billed, billedSQL, s.MerchantID, s.Mode, *e.CustomerID, e.MeterID, ts(e.Timestamp)); err != nil {
			return Event{}, store.Translate(err)
		}
		if billed {
			return Event{}, apperr.New(apperr.UsageAlreadyBilled, "meter event %s lies in a period that was already rated and billed", e.ID)
		}
	}
	at := now.UTC().Truncate(time.Microsecond)
	if _, err := tx.ExecContext(ctx, `UPDATE meter_events SET cancelled_at = $4 WHERE merchant_id = $1 AND id = $2 AND event_timestamp = $3`,
		s.MerchantID, e.ID, e.Timestamp, at); err != nil {
		return Event{}, store.Translate(err)
	}
	e.CancelledAt = &at
	if e.CustomerID != nil {
		if err := rebuildBuckets(ctx, tx, s, *e.CustomerID, e.MeterID, e.Timestamp); err != nil {
			return Event{}, err
		}
		if err := recomputeWindows(ctx, tx, s, *e.CustomerID, e); err != nil {
			return Event{}, err
		}
	}
	if _, err := events.Emit(ctx, tx, s, events.MeterEventCancelled, at, e.Wire()); err != nil {
		return Event{}, err
	}
	return e, nil
}

// recomputeWindows takes a cancelled event out of the usage windows
// (entitlements' running usage) that hold it: its count and value come off,
// and the greatest and the latest value, when the event may have been
// either, are read again from the buckets just rebuilt without it. The
// windows are never recomputed from the events, whose oldest rows
// retention may have dropped.
func recomputeWindows(ctx context.Context, tx *store.Tx, s tenant.Scope, customerID string, e Event) error {
	var ws []struct {
		Owner string    `db:"owner"`
		Since time.Time `db:"since"`
		Stale bool      `db:"stale"`
	}
	err := tx.SelectContext(ctx, &ws, `UPDATE usage_windows SET event_count = event_count - 1, value_sum = value_sum - $6, updated_at = now()
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND since <= $5
		RETURNING owner, since, (value_max IS NOT NULL AND value_max <= $6) OR last_event_id = $7 AS stale`,
		s.MerchantID, s.Mode, customerID, e.MeterID, e.Timestamp, e.Value, e.ID)
	if err != nil {
		return store.Translate(err)
	}
	var stale []int
	var sinces []time.Time
	for i, w := range ws {
		if w.Stale {
			stale, sinces = append(stale, i), append(sinces, w.Since)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	aggs, err := windowAggregates(ctx, tx, s, customerID, e.MeterID, sinces)
	if err != nil {
		return err
	}
	for j, i := range stale {
		v := windowValues(aggs[j])
		_, err := tx.ExecContext(ctx, `UPDATE usage_windows SET value_max = $6, last_value = $7, last_at = $8, last_event_id = $9
			WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND owner = $5`,
			s.MerchantID, s.Mode, customerID, e.MeterID, ws[i].Owner, v[2], v[3], v[4], v[5])
		if err != nil {
			return store.Translate(err)
		}
	}
	return nil
}

// eventByID reads the scope's meter event, locking its row when lock.
//
// The id says when ingestion made it (id.Time), and a live event's
// timestamp was accepted within MaxAge before and MaxSkew after the
// daemon's clock then: the read names that range of event_timestamp too,
// so only the six or so weekly partitions it spans are opened, not every
// week kept. An hour each side covers the time between the clock's
// reading and the id's making. An event the range misses (an id made
// under a daemon clock set elsewhere, or imported) is then read from every
// week; test mode's timestamps follow its clock, which may run years
// ahead, so it reads every week at once.
func eventByID(ctx context.Context, q store.Querier, s tenant.Scope, eventID string, lock bool) (Event, error) {
	query := `SELECT e.mode, e.id, e.meter_id, m.key AS meter_key, e.customer_id, e.value, e.event_timestamp,
			e.properties::text AS properties, e.idempotency_key, e.created_at, e.cancelled_at
		FROM meter_events e JOIN meters m ON m.merchant_id = e.merchant_id AND m.id = e.meter_id
		WHERE e.merchant_id = $1 AND e.mode = $2 AND e.id = $3`
	locking := ""
	if lock {
		locking = ` FOR UPDATE OF e`
	}
	var rows []eventRow
	if made, ok := id.Time(eventID); ok && s.Mode == tenant.Live {
		lo, hi := made.Add(-MaxAge-time.Hour), made.Add(MaxSkew+time.Hour)
		err := q.SelectContext(ctx, &rows, query+` AND e.event_timestamp >= $4 AND e.event_timestamp <= $5`+locking, s.MerchantID, s.Mode, eventID, lo, hi)
		if err != nil {
			return Event{}, store.Translate(err)
		}
	}
	if len(rows) == 0 {
		if err := q.SelectContext(ctx, &rows, query+locking, s.MerchantID, s.Mode, eventID); err != nil {
			return Event{}, store.Translate(err)
		}
	}
	if len(rows) == 0 {
		return Event{}, notFound(eventID)
	}
	return rows[0].event(), nil
}

func notFound(eventID string) error {
	return &apperr.Error{Code: apperr.ResourceNotFound, Status: 404, Message: "no meter event " + strconv.Quote(apperr.Clip(eventID))}
}

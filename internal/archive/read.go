package archive

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The archive reads with plain range queries (a timestamp before the date,
// keyset after the last record written), so it reads the same from one
// table or from a table partitioned by time, and each batch is a short
// statement of its own: no transaction is held while the file is written.
// It walks one merchant at a time: every statement names one merchant (as
// a distributed database wants), and the keyset's leading column is one
// the planner can estimate, so it walks an index rather than sorting the
// rest of a table for every batch.

// cursor is the position after the last record written: usage events are
// ordered by (merchant_id, id, event_timestamp), their primary key, feed
// events by (merchant_id, mode, created_at, id). The zero cursor of a
// merchant (and mode) is before its every row: no id is empty and no time
// is before year 1.
type cursor struct {
	merchant, mode, id string
	at                 time.Time
}

// nextMerchant returns the merchant after `after` ("" to start) whose rows
// the scope takes, or "" when there is none.
func nextMerchant(ctx context.Context, q store.Querier, s scope, after string) (string, error) {
	if s.merchant != "" {
		if after == "" {
			return s.merchant, nil
		}
		return "", nil
	}
	var ids []string
	err := q.SelectContext(ctx, &ids, `SELECT id FROM merchants WHERE id > $1 ORDER BY id LIMIT 1`, after)
	if err != nil || len(ids) == 0 {
		return "", store.Translate(err)
	}
	return ids[0], nil
}

// scope is what an archive takes: rows before a time, of one merchant or
// (merchant "") of every one.
type scope struct {
	since, before time.Time
	merchant      string
}

type meterEventRow struct {
	MerchantID     string      `db:"merchant_id"`
	Mode           tenant.Mode `db:"mode"`
	ID             string      `db:"id"`
	MeterID        string      `db:"meter_id"`
	MeterKey       string      `db:"meter_key"`
	CustomerID     *string     `db:"customer_id"`
	Value          int64       `db:"value"`
	Timestamp      time.Time   `db:"event_timestamp"`
	Properties     []byte      `db:"properties"`
	IdempotencyKey *string     `db:"idempotency_key"`
	CreatedAt      time.Time   `db:"created_at"`
	CancelledAt    *time.Time  `db:"cancelled_at"`
}

func (r meterEventRow) line() MeterEventLine {
	return MeterEventLine{Kind: KindMeterEvent, MerchantID: r.MerchantID, MeterID: r.MeterID, MeterEvent: wire.MeterEvent{
		Object: "meter_event", ID: r.ID, Meter: r.MeterKey, CustomerID: r.CustomerID, Value: strconv.FormatInt(r.Value, 10),
		EventTimestamp: wire.Timestamp(r.Timestamp), IdempotencyKey: r.IdempotencyKey, Properties: json.RawMessage(r.Properties),
		CreatedAt: wire.Timestamp(r.CreatedAt), Livemode: r.Mode == tenant.Live, CancelledAt: wire.OptTimestamp(r.CancelledAt),
	}}
}

// meterEvents reads a batch of one merchant's usage events.
func meterEvents(ctx context.Context, q store.Querier, s scope, after cursor, limit int) ([]MeterEventLine, error) {
	var rows []meterEventRow
	err := q.SelectContext(ctx, &rows, `SELECT e.merchant_id, e.mode, e.id, e.meter_id, m.key AS meter_key, e.customer_id, e.value,
			e.event_timestamp, e.properties, e.idempotency_key, e.created_at, e.cancelled_at
		FROM meter_events e JOIN meters m ON m.merchant_id = e.merchant_id AND m.id = e.meter_id
		WHERE e.merchant_id = $1 AND e.event_timestamp < $2 AND e.event_timestamp >= $6 AND (e.id, e.event_timestamp) > ($3, $4)
		ORDER BY e.id, e.event_timestamp LIMIT $5`,
		after.merchant, s.before, after.id, after.at, limit, s.since)
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make([]MeterEventLine, len(rows))
	for i, r := range rows {
		out[i] = r.line()
	}
	return out, nil
}

type eventRow struct {
	MerchantID string      `db:"merchant_id"`
	Mode       tenant.Mode `db:"mode"`
	ID         string      `db:"id"`
	Type       string      `db:"type"`
	Data       []byte      `db:"data"`
	CreatedAt  time.Time   `db:"created_at"`
	OccurredAt time.Time   `db:"occurred_at"`
}

type deliveryRow struct {
	MerchantID    string     `db:"merchant_id"`
	EventID       string     `db:"event_id"`
	ID            string     `db:"id"`
	EndpointID    string     `db:"endpoint_id"`
	Status        string     `db:"status"`
	Attempts      int        `db:"attempts"`
	NextAttemptAt time.Time  `db:"next_attempt_at"`
	LastAttemptAt *time.Time `db:"last_attempt_at"`
	LastStatus    *int       `db:"last_status"`
	LastError     *string    `db:"last_error"`
	CreatedAt     time.Time  `db:"created_at"`
	UpdatedAt     time.Time  `db:"updated_at"`
}

type attemptRow struct {
	MerchantID   string    `db:"merchant_id"`
	DeliveryID   string    `db:"delivery_id"`
	Attempt      int       `db:"attempt"`
	StartedAt    time.Time `db:"started_at"`
	Status       *int      `db:"status"`
	LatencyUS    int64     `db:"latency_us"`
	Error        *string   `db:"error"`
	ResponseBody string    `db:"response_body"`
}

// feedEvents reads a batch of one merchant's feed events of one mode, then
// their deliveries and those deliveries' attempts in one statement each.
func feedEvents(ctx context.Context, q store.Querier, s scope, after cursor, limit int) ([]EventLine, error) {
	var rows []eventRow
	// created_at >= the cursor's too: an index range the planner sees.
	err := q.SelectContext(ctx, &rows, `SELECT merchant_id, mode, id, type, data, created_at, occurred_at FROM events
		WHERE merchant_id = $1 AND mode = $2 AND created_at < $3 AND created_at >= $4 AND created_at >= $7 AND (created_at, id) > ($4, $5)
		ORDER BY created_at, id LIMIT $6`,
		after.merchant, after.mode, s.before, after.at, after.id, limit, s.since)
	if err != nil || len(rows) == 0 {
		return nil, store.Translate(err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var ds []deliveryRow
	err = q.SelectContext(ctx, &ds, `SELECT merchant_id, event_id, id, endpoint_id, status, attempts, next_attempt_at,
			last_attempt_at, last_status, last_error, created_at, updated_at
		FROM webhook_deliveries WHERE merchant_id = $1 AND event_id = ANY ($2::text[])
		ORDER BY event_id, created_at, id`, after.merchant, pq.StringArray(ids))
	if err != nil {
		return nil, store.Translate(err)
	}
	di := make([]string, len(ds))
	for i, d := range ds {
		di[i] = d.ID
	}
	var as []attemptRow
	if len(ds) > 0 {
		err = q.SelectContext(ctx, &as, `SELECT merchant_id, delivery_id, attempt, started_at, status, latency_us, error, response_body
			FROM webhook_attempts WHERE merchant_id = $1 AND delivery_id = ANY ($2::text[])
			ORDER BY delivery_id, attempt`, after.merchant, pq.StringArray(di))
		if err != nil {
			return nil, store.Translate(err)
		}
	}
	history := map[[2]string][]Attempt{}
	for _, a := range as {
		k := [2]string{a.MerchantID, a.DeliveryID}
		history[k] = append(history[k], Attempt{Attempt: a.Attempt, StartedAt: wire.Timestamp(a.StartedAt), Status: a.Status,
			LatencyUS: a.LatencyUS, Error: a.Error, ResponseBody: a.ResponseBody})
	}
	deliveries := map[[2]string][]Delivery{}
	for _, d := range ds {
		h := history[[2]string{d.MerchantID, d.ID}]
		if h == nil {
			h = []Attempt{}
		}
		k := [2]string{d.MerchantID, d.EventID}
		deliveries[k] = append(deliveries[k], Delivery{ID: d.ID, EndpointID: d.EndpointID, Status: d.Status, Attempts: d.Attempts,
			NextAttemptAt: wire.Timestamp(d.NextAttemptAt), LastAttemptAt: wire.OptTimestamp(d.LastAttemptAt), LastStatus: d.LastStatus,
			LastError: d.LastError, CreatedAt: wire.Timestamp(d.CreatedAt), UpdatedAt: wire.Timestamp(d.UpdatedAt), History: h})
	}
	out := make([]EventLine, len(rows))
	for i, r := range rows {
		dl := deliveries[[2]string{r.MerchantID, r.ID}]
		if dl == nil {
			dl = []Delivery{}
		}
		ev := wire.Event{Object: "event", ID: r.ID, Type: r.Type, CreatedAt: wire.Timestamp(r.OccurredAt), Data: json.RawMessage(r.Data), Livemode: r.Mode == tenant.Live}
		out[i] = EventLine{Kind: KindEvent, MerchantID: r.MerchantID, RecordedAt: wire.Timestamp(r.CreatedAt), Event: ev, Deliveries: dl}
	}
	return out, nil
}

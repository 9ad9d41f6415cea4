// Package events is the outbox: every event-emitting change calls Emit with
// its own transaction, so the change and its event commit together. Webhook
// deliveries and GET /v1/events read from here.
package events

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Event is one entry of the feed.
type Event struct {
	MerchantID string          `db:"merchant_id"`
	Mode       tenant.Mode     `db:"mode"`
	ID         string          `db:"id"`
	Seq        int64           `db:"seq"`
	Type       string          `db:"type"`
	Data       json.RawMessage `db:"data"`
	CreatedAt  time.Time       `db:"created_at"`
}

const columns = `merchant_id, mode, id, seq, type, data, created_at`

// DeliveryChannel is the PostgreSQL NOTIFY channel that wakes the daemon's
// delivery workers when deliveries become due.
const DeliveryChannel = "tollgate_webhook_deliveries"

// Emit records an event of type typ about data (the object's wire JSON) in
// q, which should be the transaction that made the change. In the same
// statement it creates one pending webhook delivery per enabled endpoint of
// the scope subscribed to typ, and NOTIFYs DeliveryChannel when it made any,
// so the delivery workers wake once the transaction commits (and never see a
// delivery of an event that rolled back).
func Emit(ctx context.Context, q store.Querier, s tenant.Scope, typ string, data any) (Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Event{}, err
	}
	var row struct {
		Event
		Notified int `db:"notified"`
	}
	err = q.GetContext(ctx, &row, `WITH ev AS (
			INSERT INTO events (merchant_id, mode, id, type, data) VALUES ($1, $2, $3, $4, $5) RETURNING `+columns+`
		), d AS (
			INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id)
			SELECT w.merchant_id, w.mode, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ev.id, w.id
			FROM webhook_endpoints w, ev
			WHERE w.merchant_id = $1 AND w.mode = $2 AND w.enabled AND w.removed_at IS NULL
				AND (cardinality(w.event_types) = 0 OR ev.type = ANY (w.event_types))
			RETURNING 1
		), n AS (
			SELECT pg_notify($6, '') FROM (SELECT 1 FROM d LIMIT 1) AS any_delivery
		)
		SELECT ev.*, (SELECT count(*) FROM n) AS notified FROM ev`,
		s.MerchantID, s.Mode, id.New("evt"), typ, body, DeliveryChannel)
	return row.Event, store.Translate(err)
}

// List returns a page of the scope's events, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Event], error) {
	return page.Select(ctx, q, "events", columns, s, p, func(x Event) page.Cursor { return page.Cursor{At: x.CreatedAt, Seq: x.Seq} })
}

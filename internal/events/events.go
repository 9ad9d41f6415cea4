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

// Emit records an event of type typ about data (the object's wire JSON) in
// q, which should be the transaction that made the change.
func Emit(ctx context.Context, q store.Querier, s tenant.Scope, typ string, data any) (Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Event{}, err
	}
	var e Event
	err = q.GetContext(ctx, &e, `INSERT INTO events (merchant_id, mode, id, type, data) VALUES ($1, $2, $3, $4, $5) RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("evt"), typ, body)
	return e, store.Translate(err)
}

// List returns a page of the scope's events, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Event], error) {
	return page.Select(ctx, q, "events", columns, s, p, func(x Event) page.Cursor { return page.Cursor{At: x.CreatedAt, Seq: x.Seq} })
}

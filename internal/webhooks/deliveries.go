package webhooks

import (
	"context"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Delivery states.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// MaxResponseBody is how much of a response body an attempt records.
const MaxResponseBody = 4 << 10

// Delivery is one (event, endpoint) pair: created pending by events.Emit,
// then attempted until an attempt succeeds or the retry schedule runs out.
type Delivery struct {
	MerchantID    string      `db:"merchant_id" json:"merchant_id"`
	Mode          tenant.Mode `db:"mode" json:"mode"`
	ID            string      `db:"id" json:"id"`
	Seq           int64       `db:"seq" json:"-"`
	EventID       string      `db:"event_id" json:"event_id"`
	EventType     string      `db:"event_type" json:"-"`
	EndpointID    string      `db:"endpoint_id" json:"endpoint_id"`
	Status        string      `db:"status" json:"status"`
	Attempts      int         `db:"attempts" json:"attempts"`
	CycleStart    int         `db:"cycle_start" json:"-"`
	NextAttemptAt time.Time   `db:"next_attempt_at" json:"next_attempt_at"`
	LastAttemptAt *time.Time  `db:"last_attempt_at" json:"last_attempt_at"`
	LastStatus    *int        `db:"last_status" json:"last_status"`
	LastError     *string     `db:"last_error" json:"last_error"`
	CreatedAt     time.Time   `db:"created_at" json:"created_at"`
	UpdatedAt     time.Time   `db:"updated_at" json:"updated_at"`
}

const deliveryColumns = `merchant_id, mode, id, seq, event_id, endpoint_id, status, attempts, cycle_start,
	next_attempt_at, last_attempt_at, last_status, last_error, created_at, updated_at`

// Position is the delivery's place in a newest-first list.
func (d Delivery) Position() page.Cursor { return page.Cursor{At: d.CreatedAt, Seq: d.Seq} }

// Attempt is one HTTP request of a delivery, as recorded.
type Attempt struct {
	MerchantID   string        `db:"merchant_id" json:"-"`
	Mode         tenant.Mode   `db:"mode" json:"-"`
	DeliveryID   string        `db:"delivery_id" json:"delivery_id"`
	Attempt      int           `db:"attempt" json:"attempt"`
	StartedAt    time.Time     `db:"started_at" json:"started_at"`
	Status       *int          `db:"status" json:"status"` // nil: no response
	LatencyUS    int64         `db:"latency_us" json:"latency_us"`
	Error        *string       `db:"error" json:"error"`
	ResponseBody string        `db:"response_body" json:"response_body"`
	Latency      time.Duration `db:"-" json:"-"`
}

// Filter selects deliveries for ListDeliveries; zero fields match all.
type Filter struct {
	MerchantID string
	Mode       tenant.Mode
	EventID    string
	EndpointID string
	Status     string
	Limit      int // default 50
	// Before, when set, keeps the deliveries older than a list position
	// (a page's next cursor).
	Before *page.Cursor
}

// ListDeliveries returns deliveries matching f, newest first, each with
// its event's type. A Status other than pending, succeeded or failed is
// invalid_request.
func ListDeliveries(ctx context.Context, q store.Querier, f Filter) ([]Delivery, error) {
	if f.Status != "" && f.Status != StatusPending && f.Status != StatusSucceeded && f.Status != StatusFailed {
		return nil, apperr.Field("status", "must be pending, succeeded or failed")
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.EventID != "" && f.MerchantID == "" {
		m, err := eventMerchant(ctx, q, f.EventID)
		if err != nil || m == "" {
			return []Delivery{}, err
		}
		f.MerchantID = m
	}
	before, seq := time.Time{}, int64(0)
	if f.Before != nil {
		before, seq = f.Before.At, f.Before.Seq
	}
	ds := []Delivery{}
	err := q.SelectContext(ctx, &ds, `SELECT `+qualified("d", deliveryColumns)+`, coalesce(e.type, '') AS event_type
		FROM webhook_deliveries d LEFT JOIN events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id
		WHERE ($1 = '' OR d.merchant_id = $1) AND ($2 = '' OR d.event_id = $2) AND ($3 = '' OR d.endpoint_id = $3) AND ($4 = '' OR d.status = $4)
			AND ($5 = '' OR d.mode = $5) AND (NOT $6 OR (d.created_at, d.seq) < ($7, $8))
		ORDER BY d.created_at DESC, d.seq DESC LIMIT $9`,
		f.MerchantID, f.EventID, f.EndpointID, f.Status, string(f.Mode), f.Before != nil, before, seq, f.Limit)
	return ds, store.Translate(err)
}

// eventMerchant returns the merchant of an event known by its id alone
// ("" when there is none), so that its deliveries are found by their
// merchant-led key: no index holds deliveries by event alone. The id names
// when it was minted, within the transaction that wrote the event, so the
// search first looks at the partitions of the day either side of it; only
// an event not found there (a clock far off, or no such event) costs a
// search of every partition. Callers that know the merchant pass it and
// never come here.
func eventMerchant(ctx context.Context, q store.Querier, eventID string) (string, error) {
	var ms []string
	if at, ok := id.Time(eventID); ok {
		err := q.SelectContext(ctx, &ms, `SELECT merchant_id FROM events WHERE id = $1 AND created_at >= $2 AND created_at < $3 LIMIT 1`,
			eventID, at.Add(-24*time.Hour), at.Add(24*time.Hour))
		if err != nil || len(ms) > 0 {
			return first(ms), store.Translate(err)
		}
	}
	err := q.SelectContext(ctx, &ms, `SELECT merchant_id FROM events WHERE id = $1 LIMIT 1`, eventID)
	return first(ms), store.Translate(err)
}

func first(ms []string) string {
	if len(ms) == 0 {
		return ""
	}
	return ms[0]
}

// qualified prefixes each of a column list's names with alias.
func qualified(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// GetDelivery returns one delivery with its attempts, oldest first. An
// unknown id is invalid_request.
func GetDelivery(ctx context.Context, q store.Querier, deliveryID string) (Delivery, []Attempt, error) {
	var d Delivery
	err := q.GetContext(ctx, &d, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, deliveryID)
	if store.NotFound(err) {
		return d, nil, apperr.Field("delivery", "no delivery %q", deliveryID)
	}
	if err != nil {
		return d, nil, store.Translate(err)
	}
	as := []Attempt{}
	err = q.SelectContext(ctx, &as, `SELECT merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, error, response_body
		FROM webhook_attempts WHERE merchant_id = $1 AND delivery_id = $2 ORDER BY attempt`, d.MerchantID, d.ID)
	for i := range as {
		as[i].Latency = time.Duration(as[i].LatencyUS) * time.Microsecond
	}
	return d, as, store.Translate(err)
}

// RetryInput selects deliveries to send again: exactly one of DeliveryID,
// EventID and FailedSince.
type RetryInput struct {
	DeliveryID  string
	EventID     string        // every delivery of the event
	MerchantID  string        // with EventID: the event's merchant, when the caller knows it
	FailedSince time.Duration // failed deliveries last attempted this recently
}

// Retry makes the selected deliveries due now with a fresh cycle of
// attempts (attempt numbers keep counting), whatever their state, except
// those of removed endpoints; it NOTIFYs the workers and returns the ids. No
// selection, or more than one, is invalid_request; a DeliveryID or EventID
// that matches nothing is invalid_request too.
func Retry(ctx context.Context, q store.Querier, in RetryInput) ([]string, error) {
	n := 0
	for _, set := range []bool{in.DeliveryID != "", in.EventID != "", in.FailedSince != 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, apperr.Field("delivery", "give exactly one of a delivery id, an event id or a failed-since duration")
	}
	if in.FailedSince < 0 {
		return nil, apperr.Field("failed_since", "must be positive")
	}
	merchant := in.MerchantID
	if in.EventID != "" && merchant == "" {
		m, err := eventMerchant(ctx, q, in.EventID)
		if err != nil {
			return nil, err
		}
		merchant = m
	}
	ids := pq.StringArray{}
	err := q.GetContext(ctx, &ids, `WITH r AS (
			UPDATE webhook_deliveries d SET status = 'pending', cycle_start = attempts, next_attempt_at = now(), updated_at = now()
			WHERE (CASE WHEN $1 <> '' THEN d.id = $1
				WHEN $2 <> '' THEN d.merchant_id = $5 AND d.event_id = $2
				ELSE d.status = 'failed' AND d.last_attempt_at >= now() - $3 * interval '1 microsecond' END)
			AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = d.merchant_id AND w.id = d.endpoint_id AND w.removed_at IS NULL)
			RETURNING d.id
		), n AS (
			SELECT pg_notify($4, '') FROM (SELECT 1 FROM r LIMIT 1) AS any_retry
		)
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM r, (SELECT count(*) FROM n) AS notified`,
		in.DeliveryID, in.EventID, in.FailedSince.Microseconds(), events.DeliveryChannel, merchant)
	if err != nil {
		return nil, store.Translate(err)
	}
	if len(ids) == 0 && in.DeliveryID != "" {
		return nil, apperr.Field("delivery", "no delivery %q of a current endpoint", in.DeliveryID)
	}
	if len(ids) == 0 && in.EventID != "" {
		return nil, apperr.Field("event", "no deliveries of event %q to a current endpoint", in.EventID)
	}
	return ids, nil
}

// Backlog is what an endpoint has waiting: its pending deliveries and why
// the latest attempt among them failed, when one did.
type Backlog struct {
	EndpointID string  `db:"endpoint_id"`
	Pending    int     `db:"pending"`
	LastError  *string `db:"last_error"`
	LastStatus *int    `db:"last_status"`
}

// Backlogs returns the backlog of every endpoint (of merchantID, or all
// when empty) that has pending deliveries, keyed by endpoint id: an
// operator's view of deliveries stuck behind a refusal or a failing
// receiver.
func Backlogs(ctx context.Context, q store.Querier, merchantID string) (map[string]Backlog, error) {
	var bs []Backlog
	err := q.SelectContext(ctx, &bs, `SELECT endpoint_id, count(*) AS pending,
		(array_agg(last_error ORDER BY last_attempt_at DESC NULLS LAST))[1] AS last_error,
		(array_agg(last_status ORDER BY last_attempt_at DESC NULLS LAST))[1] AS last_status
		FROM webhook_deliveries WHERE status = $2 AND ($1 = '' OR merchant_id = $1)
		GROUP BY endpoint_id`, merchantID, StatusPending)
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make(map[string]Backlog, len(bs))
	for _, b := range bs {
		out[b.EndpointID] = b
	}
	return out, nil
}

package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
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
	EventID       string      `db:"event_id" json:"event_id"`
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

const deliveryColumns = `merchant_id, mode, id, event_id, endpoint_id, status, attempts, cycle_start,
	next_attempt_at, last_attempt_at, last_status, last_error, created_at, updated_at`

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

// Job is a claimed delivery with everything sending it needs.
type Job struct {
	Delivery
	URL string
	// Secrets sign the attempt: the endpoint's secret, then the previous
	// one while a rotation's overlap lasts.
	Secrets []string
	Event   events.Event
}

// Attempt returns the number of the attempt about to be made (from 1).
func (j Job) Attempt() int { return j.Attempts + 1 }

// Claim locks up to limit of the oldest due pending deliveries of enabled
// endpoints in tx (FOR UPDATE SKIP LOCKED: deliveries locked by other
// workers, in this or another replica, are passed over) and returns them,
// none when nothing is due. The locks last until tx ends, so an attempt is
// sent by one worker only, and if the process dies mid-request the rows are
// claimable again.
func Claim(ctx context.Context, tx store.Querier, limit int) ([]Job, error) {
	var rows []struct {
		Delivery
		URL         string          `db:"url"`
		Secret      string          `db:"secret"`
		Previous    *string         `db:"previous_secret"`
		PreviousOK  bool            `db:"previous_ok"`
		EvType      string          `db:"ev_type"`
		EvData      json.RawMessage `db:"ev_data"`
		EvCreatedAt time.Time       `db:"ev_created_at"`
		EvSeq       int64           `db:"ev_seq"`
	}
	// The queue's tables grow in bursts faster than autovacuum's statistics
	// follow; planned from stale statistics ("the tables are empty") this
	// query becomes a sort of every pending row joined by scanning events,
	// seconds per claim. Walking the due index in order with index lookups
	// is always right for it, so the plan is pinned for this transaction.
	if _, err := tx.ExecContext(ctx, `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true),
		set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`); err != nil {
		return nil, store.Translate(err)
	}
	err := tx.SelectContext(ctx, &rows, `SELECT d.merchant_id, d.mode, d.id, d.event_id, d.endpoint_id, d.status, d.attempts,
			d.cycle_start, d.next_attempt_at, d.last_attempt_at, d.last_status, d.last_error, d.created_at, d.updated_at,
			w.url, w.secret, w.previous_secret, coalesce(w.previous_secret_expires_at > now(), false) AS previous_ok,
			ev.type AS ev_type, ev.data AS ev_data, ev.created_at AS ev_created_at, ev.seq AS ev_seq
		FROM webhook_deliveries d
		JOIN webhook_endpoints w ON w.merchant_id = d.merchant_id AND w.id = d.endpoint_id
		JOIN events ev ON ev.merchant_id = d.merchant_id AND ev.id = d.event_id
		WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND w.enabled
		ORDER BY d.next_attempt_at
		LIMIT $1
		FOR UPDATE OF d SKIP LOCKED`, limit)
	if err != nil {
		return nil, store.Translate(err)
	}
	jobs := make([]Job, len(rows))
	for i, row := range rows {
		jobs[i] = Job{Delivery: row.Delivery, URL: row.URL, Secrets: []string{row.Secret}, Event: events.Event{
			MerchantID: row.MerchantID, Mode: row.Mode, ID: row.EventID, Seq: row.EvSeq,
			Type: row.EvType, Data: row.EvData, CreatedAt: row.EvCreatedAt,
		}}
		if row.Previous != nil && row.PreviousOK {
			jobs[i].Secrets = append(jobs[i].Secrets, *row.Previous)
		}
	}
	return jobs, nil
}

// Result is what one attempt produced.
type Result struct {
	StartedAt time.Time
	Latency   time.Duration
	Status    int    // 0: no response
	Err       string // network error, refusal or timeout; "" if a response arrived
	Body      []byte // the start of the response body
}

// OK reports whether the attempt acknowledged the delivery (any 2xx).
func (r Result) OK() bool { return r.Err == "" && r.Status >= 200 && r.Status < 300 }

// Record stores the attempt of a job claimed in tx and moves the delivery
// on: succeeded on a 2xx; otherwise pending again after schedule[n-1] (n
// counting attempts of the current cycle), or failed once the n-th attempt
// exceeds the schedule: 1 + len(schedule) attempts in all. It returns the
// delivery's new status.
func Record(ctx context.Context, tx store.Querier, job Job, r Result, schedule []time.Duration) (string, error) {
	attempt := job.Attempt()
	body := cleanText(r.Body)
	var errText, lastErr *string
	if r.Err != "" {
		e := cleanText([]byte(r.Err))
		errText, lastErr = &e, &e
	} else if !r.OK() {
		e := fmt.Sprintf("HTTP %d", r.Status)
		lastErr = &e
	}
	var status *int
	if r.Status != 0 {
		status = &r.Status
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts
		(merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, error, response_body)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		job.MerchantID, job.Mode, job.ID, attempt, r.StartedAt, status, r.Latency.Microseconds(), errText, body); err != nil {
		return "", store.Translate(err)
	}
	next, delay := StatusSucceeded, time.Duration(0)
	if !r.OK() {
		n := attempt - job.CycleStart
		if n > len(schedule) {
			next = StatusFailed
		} else {
			next, delay = StatusPending, schedule[n-1]
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET attempts = $3, status = $4,
			next_attempt_at = clock_timestamp() + $5 * interval '1 microsecond',
			last_attempt_at = $6, last_status = $7, last_error = $8, updated_at = clock_timestamp()
		WHERE merchant_id = $1 AND id = $2`,
		job.MerchantID, job.ID, attempt, next, delay.Microseconds(), r.StartedAt, status, lastErr)
	return next, store.Translate(err)
}

// cleanText makes b storable as text: valid UTF-8, no NUL bytes.
func cleanText(b []byte) string {
	if len(b) > MaxResponseBody {
		b = b[:MaxResponseBody]
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// NextDue returns when the earliest pending delivery that is not yet due
// becomes due; ok is false when there is none.
func NextDue(ctx context.Context, q store.Querier) (at time.Time, ok bool, err error) {
	var t *time.Time
	err = q.GetContext(ctx, &t, `SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > now()`)
	if err != nil || t == nil {
		return time.Time{}, false, store.Translate(err)
	}
	return *t, true, nil
}

// Filter selects deliveries for ListDeliveries; zero fields match all.
type Filter struct {
	MerchantID string
	EventID    string
	EndpointID string
	Status     string
	Limit      int // default 50
}

// ListDeliveries returns deliveries matching f, newest first. A Status other
// than pending, succeeded or failed is invalid_request.
func ListDeliveries(ctx context.Context, q store.Querier, f Filter) ([]Delivery, error) {
	if f.Status != "" && f.Status != StatusPending && f.Status != StatusSucceeded && f.Status != StatusFailed {
		return nil, apperr.Field("status", "must be pending, succeeded or failed")
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	ds := []Delivery{}
	err := q.SelectContext(ctx, &ds, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE ($1 = '' OR merchant_id = $1) AND ($2 = '' OR event_id = $2) AND ($3 = '' OR endpoint_id = $3) AND ($4 = '' OR status = $4)
		ORDER BY created_at DESC, seq DESC LIMIT $5`, f.MerchantID, f.EventID, f.EndpointID, f.Status, f.Limit)
	return ds, store.Translate(err)
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

// RetryInput selects deliveries to send again: exactly one of its fields.
type RetryInput struct {
	DeliveryID  string
	EventID     string        // every delivery of the event
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
	ids := pq.StringArray{}
	err := q.GetContext(ctx, &ids, `WITH r AS (
			UPDATE webhook_deliveries d SET status = 'pending', cycle_start = attempts, next_attempt_at = now(), updated_at = now()
			WHERE (CASE WHEN $1 <> '' THEN d.id = $1
				WHEN $2 <> '' THEN d.event_id = $2
				ELSE d.status = 'failed' AND d.last_attempt_at >= now() - $3 * interval '1 microsecond' END)
			AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = d.merchant_id AND w.id = d.endpoint_id AND w.removed_at IS NULL)
			RETURNING d.id
		), n AS (
			SELECT pg_notify($4, '') FROM (SELECT 1 FROM r LIMIT 1) AS any_retry
		)
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM r, (SELECT count(*) FROM n) AS notified`,
		in.DeliveryID, in.EventID, in.FailedSince.Microseconds(), events.DeliveryChannel)
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

package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
)

// The delivery queue. A worker claims due deliveries by taking a lease: in
// one short transaction it numbers the attempt it is about to make (attempts
// + 1, committed before anything is sent, so no number is ever used twice)
// and sets leased_until past the attempt's timeout, so no worker here or in
// another replica claims it meanwhile. It sends outside any transaction and
// records the answer as soon as it comes (Record), which ends the lease. A
// worker that dies mid-attempt leaves the lease to expire (a poll of the
// queue finds it then); the next claim records that attempt as interrupted
// and makes the next one, within the same limit of attempts.

// Job is a claimed delivery with everything sending it needs.
type Job struct {
	Delivery
	// Attempt is the number of the attempt this claim makes (from 1).
	Attempt int
	// Interrupted lists earlier attempts that were claimed but never
	// recorded (their worker died); Record records them.
	Interrupted []int
	URL         string
	// Secrets sign the attempt: the endpoint's secret, then the previous
	// one while a rotation's overlap lasts.
	Secrets []string
	Event   events.Event
}

// Room says how many attempts each endpoint may start now. Given the
// endpoints that have due deliveries among the candidates (in due order),
// it returns each one's room; an endpoint missing from the answer gets none.
type Room func(endpoints []string) map[string]int

// Claim takes leases on up to limit due pending deliveries of enabled
// endpoints and returns them, oldest due first, none when nothing is due.
// full lists endpoints that may start no attempt now (their deliveries are
// not even read); room shares the rest out, so one slow endpoint cannot
// hold every worker.
//
// It takes two short statements: the due candidates are read from the due
// index (walked in order, with a primary-key probe of the endpoint per row:
// dueSQL), chosen here within each endpoint's room, and leased by key, an
// UPDATE that locks each row SKIP LOCKED and re-checks it is still due, so
// of two claimers racing for a row one gets it and the other moves on.
func Claim(ctx context.Context, db *store.DB, limit int, full []string, room Room, lease time.Duration) ([]Job, error) {
	var cands []struct {
		MerchantID string `db:"merchant_id"`
		ID         string `db:"id"`
		EndpointID string `db:"endpoint_id"`
	}
	if full == nil {
		full = []string{} // never NULL: "x = ANY (NULL)" is not false
	}
	err := db.SelectContext(ctx, &cands, dueSQL, 4*limit, pq.StringArray(full))
	if err != nil || len(cands) == 0 {
		return nil, store.Translate(err)
	}
	var endpoints []string
	seen := map[string]bool{}
	for _, c := range cands {
		if !seen[c.EndpointID] {
			seen[c.EndpointID] = true
			endpoints = append(endpoints, c.EndpointID)
		}
	}
	left := room(endpoints)
	// The chosen ids by merchant, merchants in the order of their first
	// due delivery: each merchant's are leased by a statement of its own,
	// so a row lock never spans merchants (they could live on different
	// database nodes).
	var merchants []string
	ids := map[string][]string{}
	chosen := 0
	for _, c := range cands {
		if chosen == limit {
			break
		}
		if left[c.EndpointID] <= 0 {
			continue
		}
		left[c.EndpointID]--
		chosen++
		if ids[c.MerchantID] == nil {
			merchants = append(merchants, c.MerchantID)
		}
		ids[c.MerchantID] = append(ids[c.MerchantID], c.ID)
	}
	if len(merchants) == 0 {
		return nil, nil
	}
	var rows []claimRow
	for _, m := range merchants {
		var mine []claimRow
		if err := db.SelectContext(ctx, &mine, claimSQL, m, pq.StringArray(ids[m]), lease.Microseconds()); err != nil {
			return nil, store.Translate(err)
		}
		rows = append(rows, mine...)
	}
	if len(merchants) > 1 {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].NextAttemptAt.Before(rows[j].NextAttemptAt) })
	}
	jobs := make([]Job, len(rows))
	for i, row := range rows {
		jobs[i] = row.job()
	}
	return jobs, nil
}

// dueSQL reads due candidates from the due index whatever the table's
// statistics say (migration 043).
const dueSQL = `SELECT merchant_id, id, endpoint_id FROM webhook_due_deliveries($1, $2::text[])`

// claimSQL leases the chosen deliveries of one merchant ($1) that are
// still due (of enabled endpoints) and returns them with their endpoint
// and event.
//
// Each row is found and locked by a probe of its key in a LATERAL subquery
// (its locking clause keeps it from being flattened), which also says
// whether the row, as locked, is still due: a column, not a condition, so
// the probe stays a probe (OFFSET 0 keeps the outer filter from being
// pushed into it). The UPDATE then names each row by that ctid and by
// nothing an index could serve: named by id with the due conditions beside
// it, plans made before the table had statistics walked the merchant's
// deliveries (up to 16 ms a claim in the shared harness, in a new
// install's first seconds), and analysed ones read the due index into a
// bitmap. A row another transaction changed after this statement began has
// a ctid its snapshot cannot see, and is left for the next claim. The
// endpoint is probed by key for each (OFFSET 0 keeps the EXISTS from
// becoming a join that walks the merchant's endpoints). The event is probed
// in the one partition its created_at names (pruned as the statement runs),
// and in every partition only when that finds nothing (deliveries made
// before they recorded it). The attempts already recorded are looked up
// only for a retry: a first attempt has none. A row another claimer holds
// is skipped (SKIP LOCKED), not waited for; one it has leased meanwhile is
// no longer due and is skipped too.
const claimSQL = `
WITH leased AS (
	UPDATE webhook_deliveries d SET attempts = d.attempts + 1, leased_at = clock_timestamp(),
		leased_until = clock_timestamp() + $3 * interval '1 microsecond', updated_at = clock_timestamp()
	FROM (SELECT x.row FROM unnest($2::text[]) AS c(id)
		CROSS JOIN LATERAL (SELECT f.ctid AS row,
				f.status = 'pending' AND f.next_attempt_at <= now() AND (f.leased_until IS NULL OR f.leased_until <= now()) AS due
			FROM webhook_deliveries f WHERE f.merchant_id = $1 AND f.id = c.id OFFSET 0 FOR UPDATE SKIP LOCKED) x
		WHERE x.due) v
	WHERE d.ctid = v.row
		AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.merchant_id = d.merchant_id AND w.enabled OFFSET 0)
	RETURNING d.merchant_id, d.mode, d.id, d.event_id, d.endpoint_id, d.status, d.attempts, d.cycle_start,
		d.next_attempt_at, d.last_attempt_at, d.last_status, d.last_error, d.created_at, d.updated_at, d.event_created_at
), interrupted AS (
	-- The row as it was before this statement (a WITH's changes are not
	-- visible to its siblings): a lease still set means the attempt it
	-- covered was never recorded. It is recorded now, at the time it was
	-- claimed and sent, so a later crash cannot lose that time too.
	INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, latency_us, error, response_body)
	SELECT l.merchant_id, l.mode, l.id, l.attempts - 1,
		coalesce(o.leased_at, o.leased_until - $3 * interval '1 microsecond'), 0, '` + interruptedError + `', ''
	FROM leased l CROSS JOIN LATERAL (SELECT o.leased_at, o.leased_until FROM webhook_deliveries o
		WHERE o.merchant_id = $1 AND o.id = l.id OFFSET 0) o
	WHERE o.leased_until IS NOT NULL AND l.attempts > 1
	ON CONFLICT DO NOTHING
)
SELECT l.*, CASE WHEN l.attempts > 1 THEN coalesce((SELECT max(a.attempt) FROM webhook_attempts a
		WHERE a.merchant_id = $1 AND a.delivery_id = l.id), 0) ELSE 0 END AS recorded,
	w.url, w.secret, w.previous_secret, coalesce(w.previous_secret_expires_at > now(), false) AS previous_ok,
	ev.type AS ev_type, ev.data AS ev_data, ev.created_at AS ev_created_at, ev.occurred_at AS ev_occurred_at, ev.seq AS ev_seq
FROM leased l
CROSS JOIN LATERAL (SELECT w.url, w.secret, w.previous_secret, w.previous_secret_expires_at FROM webhook_endpoints w
	WHERE w.merchant_id = $1 AND w.id = l.endpoint_id OFFSET 0) w
CROSS JOIN LATERAL ((SELECT e.type, e.data, e.created_at, e.occurred_at, e.seq FROM events e
		WHERE e.merchant_id = $1 AND e.id = l.event_id AND e.created_at = l.event_created_at)
	UNION ALL (SELECT e.type, e.data, e.created_at, e.occurred_at, e.seq FROM events e
		WHERE e.merchant_id = $1 AND e.id = l.event_id) LIMIT 1) ev
ORDER BY l.next_attempt_at`

type claimRow struct {
	Delivery
	EventCreatedAt *time.Time      `db:"event_created_at"`
	Recorded       int             `db:"recorded"`
	URL            string          `db:"url"`
	Secret         string          `db:"secret"`
	Previous       *string         `db:"previous_secret"`
	PreviousOK     bool            `db:"previous_ok"`
	EvType         string          `db:"ev_type"`
	EvData         json.RawMessage `db:"ev_data"`
	EvCreatedAt    time.Time       `db:"ev_created_at"`
	EvOccurredAt   time.Time       `db:"ev_occurred_at"`
	EvSeq          int64           `db:"ev_seq"`
}

func (row claimRow) job() Job {
	j := Job{Delivery: row.Delivery, Attempt: row.Attempts, URL: row.URL, Secrets: []string{row.Secret}, Event: events.Event{
		MerchantID: row.MerchantID, Mode: row.Mode, ID: row.EventID, Seq: row.EvSeq,
		Type: row.EvType, Data: row.EvData, CreatedAt: row.EvCreatedAt, OccurredAt: row.EvOccurredAt,
	}}
	for n := row.Recorded + 1; n < row.Attempts; n++ {
		j.Interrupted = append(j.Interrupted, n)
	}
	if row.Previous != nil && row.PreviousOK {
		j.Secrets = append(j.Secrets, *row.Previous)
	}
	return j
}

// Exhausted reports whether the job's attempt is past its cycle's limit of
// 1 + len(schedule) attempts (possible only after interrupted attempts):
// it must not be sent, and Record marks the delivery failed.
func (j Job) Exhausted(schedule []time.Duration) bool {
	return j.Attempt-j.CycleStart > 1+len(schedule)
}

// Result is what one attempt produced.
type Result struct {
	StartedAt time.Time
	Latency   time.Duration
	Status    int    // 0: no response
	Err       string // network error, refusal or timeout; "" if a response arrived
	Body      []byte // the start of the response body
	// NotSent marks an exhausted job that was not sent (see Exhausted).
	NotSent bool
	// RetryAfter is the wait a 429 or 503 asked for (Retry-After); nil
	// when it asked for none.
	RetryAfter *time.Duration
}

// OK reports whether the attempt acknowledged the delivery (any 2xx).
func (r Result) OK() bool { return r.Err == "" && r.Status >= 200 && r.Status < 300 }

// NextDue returns when the earliest pending delivery that was not yet
// claimable at since (when the claim that found nothing started) becomes
// claimable: its next attempt falls due, or the lease of the attempt a
// worker holds runs out. ok is false when there is none. A worker that dies
// mid-attempt (its replica killed) leaves its lease behind; waking at the
// lease's end, rather than at the next poll, makes the attempt again as
// soon as the lease allows. A delivery that became claimable while that
// claim ran is returned too, in the past, so the worker claims again at
// once: filtered on "not yet due now", a retry due a few milliseconds after
// a claim began waited for the next poll. since is held to the database's
// clock, should the caller's run ahead of it.
//
// Each branch reads the due index (pending deliveries by next attempt): the
// next attempt is its first entry after since; leases are taken only on
// due deliveries and ended when their answer is recorded, so the leases
// held are among the entries already due, the attempts in flight and the
// backlog a claim walks anyway.
func NextDue(ctx context.Context, q store.Querier, since time.Time) (at time.Time, ok bool, err error) {
	var ts []sql.NullTime
	if err := q.SelectContext(ctx, &ts, nextDueSQL, since); err != nil {
		return time.Time{}, false, store.Translate(err)
	}
	for _, t := range ts {
		if t.Valid && (!ok || t.Time.Before(at)) {
			at, ok = t.Time, true
		}
	}
	return at, ok, nil
}

// nextDueSQL is NextDue's statement: the next attempt due after $1, and
// the end of the earliest lease still running at $1 (NULL where none), as
// two rows, each branch a query of its own on one table.
const nextDueSQL = `SELECT min(next_attempt_at) FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at > least($1::timestamptz, now())
			AND (leased_until IS NULL OR leased_until <= now())
	UNION ALL
	SELECT min(leased_until) FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= now() AND leased_until > least($1::timestamptz, now())`

// Stats is the state of the queue, for metrics.
type Stats struct {
	Pending      int64
	OldestDueAge time.Duration // how long the oldest due delivery has waited
}

// QueueStats counts pending deliveries and the age of the oldest due one.
func QueueStats(ctx context.Context, q store.Querier) (Stats, error) {
	var row struct {
		Pending int64    `db:"pending"`
		AgeUS   *float64 `db:"age_us"`
	}
	err := q.GetContext(ctx, &row, `SELECT count(*) AS pending,
		extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()
			AND (leased_until IS NULL OR leased_until <= now()))) * 1e6 AS age_us
		FROM webhook_deliveries WHERE status = 'pending'`)
	st := Stats{Pending: row.Pending}
	if row.AgeUS != nil {
		st.OldestDueAge = time.Duration(*row.AgeUS) * time.Microsecond
	}
	return st, store.Translate(err)
}

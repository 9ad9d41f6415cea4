package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
)

// interruptedError is recorded for attempts whose worker died mid-request.
const interruptedError = "no answer recorded: the daemon stopped during the attempt"

// Answer is a claimed job and what its attempt produced.
type Answer struct {
	Job    Job
	Result Result
}

// Record stores the attempts of claimed jobs in tx and moves each delivery
// on: succeeded on a 2xx; otherwise pending again after schedule[n-1] (n
// counting attempts of the current cycle), or failed once the n-th attempt
// exceeds the schedule: 1 + len(schedule) attempts in all. An exhausted job
// (not sent) only marks the delivery failed. A delivery is changed only
// while it is still at the job's attempt (a later claim after the lease
// expired has moved it on).
//
// The answers' attempts and changes are written by one statement, however
// many there are: a recorder commits the answers that arrived together. Run
// on the pool (q a *store.DB), that statement is its own transaction, and
// an answer is safe from a crash of the daemon as soon as the statement is
// sent, one round trip sooner than a BEGIN … COMMIT around it allows.
//
// That transaction does not wait for its commit to reach the disk
// (synchronous_commit off, for it alone): the answers are visible, and safe
// from the daemon's crash, at once, and the disk has them within the WAL
// writer's delay or at the next commit that waits for it (the next claim's,
// say). Waiting, every recorder queued for a flush of the WAL behind the
// credit and usage writes, and its flushes delayed theirs: with one
// endpoint subscribed, more of the database's waits were recorders' flushes
// than the writes' own (shared harness). Only a crash of PostgreSQL itself
// in that window can lose an answer; the claim that numbered the attempt
// was flushed before it was sent, so the lease still holds until it runs
// out, and the attempt is then recorded as interrupted and made again:
// delivered at least once, never twice at once. The
// statements around it (disabling an endpoint that answered 410, before
// it; failing an exhausted delivery, after it) are each right on their
// own, and a batch run again after one of them failed does no harm, so
// they need no transaction with it.
//
// A 410 Gone disables the endpoint and records why (DisabledGone). A 429 or
// 503 with a Retry-After is retried after the wait it asks for, held
// within the schedule's shortest and longest step.
//
// Answers of several merchants are written a merchant at a time, so each
// statement stays on one merchant.
func Record(ctx context.Context, q store.Querier, answers []Answer, schedule []time.Duration) error {
	var merchants []string
	byMerchant := map[string][]Answer{}
	for _, a := range answers {
		m := a.Job.MerchantID
		if byMerchant[m] == nil {
			merchants = append(merchants, m)
		}
		byMerchant[m] = append(byMerchant[m], a)
	}
	for _, m := range merchants {
		if err := recordMerchant(ctx, q, m, byMerchant[m], schedule); err != nil {
			return err
		}
	}
	return nil
}

// recordMerchant is Record for the answers of one merchant.
func recordMerchant(ctx context.Context, q store.Querier, merchantID string, answers []Answer, schedule []time.Duration) error {
	var w recordWrites
	var gone, exhausted []Job
	for _, a := range answers {
		job, r := a.Job, a.Result
		for _, n := range job.Interrupted {
			w.attempt(job, n, job.UpdatedAt, nil, 0, ptr(interruptedError), "")
		}
		if r.NotSent {
			exhausted = append(exhausted, job)
			continue
		}
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
		w.attempt(job, job.Attempt, r.StartedAt, status, r.Latency, errText, cleanText(r.Body))
		next, delay := StatusSucceeded, time.Duration(0)
		if n := job.Attempt - job.CycleStart; !r.OK() {
			if n > len(schedule) {
				next = StatusFailed
			} else {
				next, delay = StatusPending, retryDelay(schedule, n, r)
			}
		}
		w.move(job, next, delay, r.StartedAt, status, lastErr)
		if r.Err == "" && r.Status == http.StatusGone {
			gone = append(gone, job)
		}
	}
	for _, job := range gone {
		// The receiver says the endpoint is gone for good: stop sending to
		// it (its deliveries wait, pending, should it be enabled again).
		// Disabled before the answer is recorded: recorded first, the
		// delivery fell due for its retry while its lease ended, and a
		// claim between the two statements sent the gone endpoint a
		// second request.
		_, err := q.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, disabled_at = clock_timestamp()
			WHERE merchant_id = $1 AND id = $2 AND enabled`, job.MerchantID, job.EndpointID, DisabledGone)
		if err != nil {
			return store.Translate(err)
		}
	}
	if len(w.aDelivery) > 0 || len(w.mID) > 0 {
		str, nint, nstr := func(v []string) any { return pq.StringArray(v) }, func(v []*int) any { return pq.GenericArray{A: v} },
			func(v []*string) any { return store.NullTexts(v) }
		_, err := q.ExecContext(ctx, recordSQL,
			str(w.aMerchant), str(w.aMode), str(w.aDelivery), pq.Int64Array(w.aAttempt), str(w.aStarted), nint(w.aStatus),
			pq.Int64Array(w.aLatency), nstr(w.aError), str(w.aBody),
			str(w.mMerchant), str(w.mID), pq.Int64Array(w.mAttempt), str(w.mStatus), pq.Int64Array(w.mDelay), str(w.mStarted),
			nint(w.mLast), nstr(w.mError), merchantID)
		if err != nil {
			return store.Translate(err)
		}
	}
	for _, job := range exhausted {
		if _, err := q.ExecContext(ctx, exhaustedSQL, job.MerchantID, job.ID, job.Attempt, interruptedError); err != nil {
			return store.Translate(err)
		}
	}
	return nil
}

// recordWrites is what Record writes, one array per column.
type recordWrites struct {
	// webhook_attempts rows
	aMerchant, aMode, aDelivery, aStarted, aBody []string
	aAttempt, aLatency                           []int64
	aStatus                                      []*int
	aError                                       []*string
	// deliveries moved on
	mMerchant, mID, mStatus, mStarted []string
	mAttempt, mDelay                  []int64
	mLast                             []*int
	mError                            []*string
}

func (w *recordWrites) attempt(job Job, n int, at time.Time, status *int, latency time.Duration, errText *string, body string) {
	w.aMerchant, w.aMode, w.aDelivery = append(w.aMerchant, job.MerchantID), append(w.aMode, string(job.Mode)), append(w.aDelivery, job.ID)
	w.aAttempt, w.aStarted, w.aStatus = append(w.aAttempt, int64(n)), append(w.aStarted, at.UTC().Format(time.RFC3339Nano)), append(w.aStatus, status)
	w.aLatency, w.aError, w.aBody = append(w.aLatency, latency.Microseconds()), append(w.aError, errText), append(w.aBody, body)
}

func (w *recordWrites) move(job Job, next string, delay time.Duration, started time.Time, status *int, lastErr *string) {
	w.mMerchant, w.mID, w.mAttempt = append(w.mMerchant, job.MerchantID), append(w.mID, job.ID), append(w.mAttempt, int64(job.Attempt))
	w.mStatus, w.mDelay, w.mStarted = append(w.mStatus, next), append(w.mDelay, delay.Microseconds()), append(w.mStarted, started.UTC().Format(time.RFC3339Nano))
	w.mLast, w.mError = append(w.mLast, status), append(w.mError, lastErr)
}

// recordSQL inserts attempts and moves deliveries on (see Record), all of
// one merchant ($18), and commits without waiting for the disk (the
// condition's subquery runs once, with the first delivery it moves). An
// attempt already on record (an interrupted one recorded by an earlier
// claim) is left as it is. Each delivery is found by a probe of its key in
// a LATERAL subquery and updated by ctid, as in claimSQL: joined flat, the
// plan made on a table without statistics hash-joined the arrays with a
// read of every delivery. A delivery another transaction changed meanwhile
// (its endpoint removed, say) has a new ctid and is left as that made it.
const recordSQL = `WITH a AS (
		INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, error, response_body)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::int[], $7::bigint[], $8::text[], $9::text[])
		ON CONFLICT DO NOTHING
	)
	UPDATE webhook_deliveries d SET status = v.status, leased_until = NULL,
		next_attempt_at = clock_timestamp() + v.delay_us * interval '1 microsecond',
		last_attempt_at = v.started_at, last_status = v.last_status, last_error = v.last_error, updated_at = clock_timestamp()
	FROM (SELECT x.row, v.* FROM unnest($10::text[], $11::text[], $12::int[], $13::text[], $14::bigint[], $15::timestamptz[], $16::int[], $17::text[])
			AS v (merchant_id, id, attempt, status, delay_us, started_at, last_status, last_error)
		CROSS JOIN LATERAL (SELECT f.ctid AS row FROM webhook_deliveries f WHERE f.merchant_id = $18 AND f.id = v.id OFFSET 0) x) v
	WHERE d.ctid = v.row AND d.attempts = v.attempt
		AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL`

// exhaustedSQL marks failed a delivery whose claimed attempt was past its
// cycle's limit, and so not sent.
const exhaustedSQL = `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = clock_timestamp(), leased_until = NULL,
		last_error = coalesce(last_error, $4), updated_at = clock_timestamp()
	WHERE merchant_id = $1 AND id = $2 AND attempts = $3`

// retryDelay is how long after attempt n of its cycle a failed delivery is
// tried again: the schedule's n-th step, or what a 429 or 503 asked for in
// Retry-After, within the schedule's bounds.
func retryDelay(schedule []time.Duration, n int, r Result) time.Duration {
	delay := schedule[n-1]
	if r.RetryAfter == nil || (r.Status != http.StatusTooManyRequests && r.Status != http.StatusServiceUnavailable) {
		return delay
	}
	lo, hi := slices.Min(schedule), slices.Max(schedule)
	return min(max(*r.RetryAfter, lo), hi)
}

// ParseRetryAfter reads a Retry-After header: a number of seconds or an
// HTTP date (a date in the past is a wait of zero). ok is false when the
// value is neither.
func ParseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(365*24*3600))) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

func ptr[T any](v T) *T { return &v }

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

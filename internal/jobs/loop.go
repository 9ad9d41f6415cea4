package jobs

import (
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// Error backoff bounds: a failing job (the database is down, say) retries
// soon, then less often.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// run is one loop of a job until Stop.
func (r *Runner) run(l *loop) {
	backoff := minBackoff
	for !r.stopping() {
		wait, err := r.step(l)
		if err != nil {
			if r.stopping() {
				return
			}
			r.log.Warn("job failed; retrying", "job", l.Name, "error", err, "retry_in", backoff)
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = minBackoff
		}
		if wait == 0 {
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-r.stop:
			timer.Stop()
			return
		case <-l.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// step runs the job once if it is due and returns how long to wait before
// the next step (zero: at once).
func (r *Runner) step(l *loop) (time.Duration, error) {
	if l.Periodic {
		return r.periodic(l)
	}
	now := r.clock.Now()
	more, err := l.Run(r.ctx, now)
	if err != nil || more {
		return 0, err
	}
	wait := l.Every
	if l.Next != nil {
		at, ok, err := l.Next(r.ctx, now)
		if err != nil {
			return 0, err
		}
		if ok {
			wait = min(wait, max(at.Sub(r.clock.Now()), time.Millisecond))
		}
	}
	return wait, nil
}

// periodic claims the job's next run in job_schedule and, if this replica
// got it, runs the job to completion; it returns the wait until the next
// run is due.
func (r *Runner) periodic(l *loop) (time.Duration, error) {
	now := r.clock.Now()
	var next *time.Time
	err := r.db.QueryRowxContext(r.ctx, `WITH ins AS (
			INSERT INTO job_schedule (name, next_run_at) VALUES ($1, $2::timestamptz + $4 * interval '1 microsecond')
			ON CONFLICT (name) DO NOTHING
		), claimed AS (
			UPDATE job_schedule SET next_run_at = $2::timestamptz + $3 * interval '1 microsecond', runs = runs + 1, last_started_at = $2
			WHERE name = $1 AND next_run_at <= $2
			RETURNING next_run_at
		)
		SELECT (SELECT next_run_at FROM claimed)`,
		l.Name, now, l.Every.Microseconds(), firstDelay(l.Job).Microseconds()).Scan(&next)
	if err != nil {
		return 0, store.Translate(err)
	}
	if next == nil { // not claimed: another replica ran it, or it is not due
		return r.untilDue(l)
	}
	var runErr error
	for {
		more, err := l.Run(r.ctx, now)
		if err != nil || !more || r.stopping() {
			runErr = err
			break
		}
	}
	var lastErr *string
	if runErr != nil {
		msg := runErr.Error()
		lastErr = &msg
	}
	_, err = r.db.ExecContext(r.ctx, `UPDATE job_schedule SET last_finished_at = $2, last_error = $3 WHERE name = $1`,
		l.Name, r.clock.Now(), lastErr)
	if runErr != nil {
		// The run is over either way; the next one comes at its time.
		r.log.Warn("periodic job failed", "job", l.Name, "error", runErr)
	}
	if err != nil {
		return 0, store.Translate(err)
	}
	return max(next.Sub(r.clock.Now()), time.Millisecond), nil
}

// untilDue reads when the job is next due.
func (r *Runner) untilDue(l *loop) (time.Duration, error) {
	var next time.Time
	if err := r.db.GetContext(r.ctx, &next, `SELECT next_run_at FROM job_schedule WHERE name = $1`, l.Name); err != nil {
		return 0, store.Translate(err)
	}
	return min(max(next.Sub(r.clock.Now()), time.Millisecond), l.Every), nil
}

func firstDelay(j Job) time.Duration {
	if j.First > 0 {
		return j.First
	}
	return j.Every
}

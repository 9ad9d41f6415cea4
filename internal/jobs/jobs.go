// Package jobs is the one runner of everything the daemon does in the
// background: periodic maintenance (credit expiry, pruning) and queues of
// due work (webhook deliveries; renewals and dunning next). Replicas on one
// database share the work without a coordinator:
//
//   - a periodic job has a row in job_schedule; a replica runs it only after
//     moving that row's next_run_at forward in one statement, so each due run
//     happens once however many replicas there are;
//   - a queue job claims its own items (FOR UPDATE SKIP LOCKED, or a lease),
//     so every replica may run it at once, each on different items.
//
// A job's Run does one step of work and says whether more is due at once;
// the runner calls it again, or sleeps until woken (a committed transaction
// that asked for the job's channel, here or in another replica through
// LISTEN/NOTIFY), until the job's next work falls due, or until its poll
// interval passes, which bounds how long a lost wake-up can delay work.
// Drain runs a job to completion on demand (tests; the test clock).
package jobs

import (
	"context"
	"fmt"
	"time"
)

// Job is one kind of background work.
type Job struct {
	// Name identifies the job in logs, metrics, job_schedule and Drain.
	Name string
	// Run does one step of the work due at now and reports whether more may
	// be due right away. It must be safe to run in several replicas at once
	// (a queue job claims its items) and, for a periodic job, twice in a row.
	Run func(ctx context.Context, now time.Time) (more bool, err error)
	// Every is a periodic job's period, or a queue job's poll interval.
	Every time.Duration
	// Periodic makes the job run once per Every across all replicas; the
	// first run is Every after the schedule row is first created, unless
	// First is set.
	Periodic bool
	First    time.Duration
	// Wake, for a queue job, names the store channel (store.Tx.Notify) whose
	// commits wake it.
	Wake string
	// Next, for a queue job, says when its next work falls due, so the
	// runner sleeps until then rather than a whole poll interval.
	Next func(ctx context.Context, now time.Time) (at time.Time, ok bool, err error)
	// Workers is how many loops run a queue job at once in this replica
	// (default 1).
	Workers int
}

func (j Job) validate() error {
	switch {
	case j.Name == "":
		return fmt.Errorf("jobs: a job needs a name")
	case j.Run == nil:
		return fmt.Errorf("jobs: %s has no Run", j.Name)
	case j.Every <= 0:
		return fmt.Errorf("jobs: %s needs a positive Every", j.Name)
	case j.Periodic && (j.Wake != "" || j.Next != nil || j.Workers > 1):
		return fmt.Errorf("jobs: %s is periodic: Wake, Next and Workers are for queue jobs", j.Name)
	}
	return nil
}

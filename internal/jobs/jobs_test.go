package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/jobs"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func open(t *testing.T) *store.DB {
	t.Helper()
	db := testdb.Open(t)
	return db
}

func start(t *testing.T, db *store.DB, js ...jobs.Job) *jobs.Runner {
	t.Helper()
	r := jobs.New(db, clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, j := range js {
		if err := r.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	r.Start()
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	return r
}

func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two replicas on one database run a periodic job once per period between
// them: never two runs of one period, and the schedule counts every run.
func TestPeriodicJobRunsOncePerPeriodAcrossReplicas(t *testing.T) {
	t.Parallel()
	db := open(t)
	const every = 150 * time.Millisecond
	var mu sync.Mutex
	var runs []time.Time
	job := jobs.Job{Name: "tick", Periodic: true, Every: every, First: time.Millisecond,
		Run: func(_ context.Context, now time.Time) (bool, error) {
			mu.Lock()
			runs = append(runs, now)
			mu.Unlock()
			return false, nil
		}}
	start(t, db, job)
	start(t, db, job)
	eventually(t, 20*time.Second, "10 runs", func() bool { mu.Lock(); defer mu.Unlock(); return len(runs) >= 10 })
	mu.Lock()
	got := append([]time.Time(nil), runs...)
	mu.Unlock()
	for i := 1; i < len(got); i++ {
		// Each run claims the next period; a run closer to the previous
		// than the period means two replicas ran one period.
		if gap := got[i].Sub(got[i-1]); gap < every-20*time.Millisecond {
			t.Fatalf("runs %d and %d only %v apart (period %v)", i-1, i, gap, every)
		}
	}
	var counted int
	if err := db.Get(&counted, `SELECT runs FROM job_schedule WHERE name = 'tick'`); err != nil || counted < len(got) {
		t.Fatalf("schedule counts %d runs, saw %d (%v)", counted, len(got), err)
	}
}

// A queue job sleeps until a committed transaction asks for its channel,
// and does not run for one that rolled back.
func TestQueueJobWokenByCommit(t *testing.T) {
	t.Parallel()
	db := open(t)
	var runs atomic.Int64
	start(t, db, jobs.Job{Name: "queue", Every: time.Hour, Wake: "test_channel",
		Run: func(context.Context, time.Time) (bool, error) { runs.Add(1); return false, nil }})
	eventually(t, 5*time.Second, "first run", func() bool { return runs.Load() == 1 })
	_ = db.InTx(context.Background(), func(tx *store.Tx) error { tx.Notify("test_channel"); return context.Canceled })
	if err := db.InTx(context.Background(), func(tx *store.Tx) error { tx.Notify("test_channel"); return nil }); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "woken by the commit", func() bool { return runs.Load() == 2 })
	// The rolled-back transaction woke nobody: exactly one more run.
	time.Sleep(50 * time.Millisecond)
	if n := runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
}

// Drain runs a job's steps until none reports more.
func TestDrain(t *testing.T) {
	t.Parallel()
	db := open(t)
	left := 5
	r := jobs.New(db, clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := r.Add(jobs.Job{Name: "batches", Every: time.Hour,
		Run: func(context.Context, time.Time) (bool, error) { left--; return left > 0, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := r.Drain(context.Background(), "batches", time.Now()); err != nil || left != 0 {
		t.Fatalf("drained to %d: %v", left, err)
	}
	if err := r.Drain(context.Background(), "nope", time.Now()); err == nil {
		t.Fatal("draining an unknown job succeeded")
	}
	for _, bad := range []jobs.Job{{}, {Name: "x"}, {Name: "x", Run: func(context.Context, time.Time) (bool, error) { return false, nil }},
		{Name: "y", Every: time.Second, Periodic: true, Wake: "c", Run: func(context.Context, time.Time) (bool, error) { return false, nil }}} {
		if err := r.Add(bad); err == nil {
			t.Errorf("Add(%+v) accepted", bad.Name)
		}
	}
}

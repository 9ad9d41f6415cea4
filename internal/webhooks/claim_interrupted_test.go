package webhooks

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// An attempt whose worker died (its lease expired, nothing recorded) is
// recorded by the next claim at the time it was claimed and sent, not at
// the reclaim: from leased_at, or for a lease taken before leased_at
// existed, from leased_until less the lease.
func TestClaimRecordsInterruptedAttemptAtItsSendTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	const lease = 15 * time.Second
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_int', 'int')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_int', 'test', 'we_int', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_int', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 3) n`,
		// Claimed 40 s ago (attempt 2 after a recorded 1), the worker died.
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, attempts, leased_at, leased_until, next_attempt_at) VALUES
			('mer_int', 'test', 'dlv_dated', 'evt_1', 'we_int', 2, now() - interval '40 seconds', now() - interval '25 seconds', now() - interval '1 minute'),
			('mer_int', 'test', 'dlv_old', 'evt_2', 'we_int', 1, NULL, now() - interval '25 seconds', now() - interval '1 minute'),
			('mer_int', 'test', 'dlv_fresh', 'evt_3', 'we_int', 0, NULL, NULL, now() - interval '1 minute')`,
		`INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, response_body)
			VALUES ('mer_int', 'test', 'dlv_dated', 1, now() - interval '2 minutes', 500, 1000, '')`,
	)
	room := func(eps []string) map[string]int { return map[string]int{"we_int": 10} }
	jobs, err := Claim(ctx, db, 10, nil, room, lease)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(jobs))
	}
	var rows []struct {
		ID      string  `db:"delivery_id"`
		Attempt int     `db:"attempt"`
		AgoSecs float64 `db:"ago"`
		Error   *string `db:"error"`
	}
	err = db.SelectContext(ctx, &rows, `SELECT delivery_id, attempt, extract(epoch FROM now() - started_at) AS ago, error
		FROM webhook_attempts ORDER BY delivery_id, attempt`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.ID+"#"+string(rune('0'+r.Attempt))] = r.AgoSecs
		if r.Attempt > 1 || r.ID == "dlv_old" {
			if deref(r.Error) != interruptedError {
				t.Errorf("%s attempt %d: error %q", r.ID, r.Attempt, deref(r.Error))
			}
		}
	}
	if len(rows) != 3 {
		t.Fatalf("attempts on record: %+v", rows)
	}
	for key, want := range map[string]float64{"dlv_dated#2": 40, "dlv_old#1": 40} {
		if ago, ok := got[key]; !ok || ago < want-2 || ago > want+2 {
			t.Errorf("%s recorded %.1f s ago, want %v s (when it was sent)", key, ago, want)
		}
	}
	// Record's own copy of the interrupted attempt does not replace it.
	for _, j := range jobs {
		if j.ID == "dlv_dated" && (len(j.Interrupted) != 1 || j.Interrupted[0] != 2 || j.Attempt != 3) {
			t.Errorf("dlv_dated job: attempt %d, interrupted %v", j.Attempt, j.Interrupted)
		}
	}
}

// A retry that fell due while a claim ran (after it started, before it
// ended) is what NextDue returns, in the past, so the worker claims again
// at once instead of at the next poll; one due before the claim began (not
// claimable: its endpoint is full or disabled) is not, nor the end of a
// lease that runs out later.
func TestNextDueCatchesWhatFellDueDuringTheClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_nd', 'nd')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_nd', 'test', 'we_nd', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_nd', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 3) n`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, next_attempt_at, leased_until) VALUES
			('mer_nd', 'test', 'dlv_before', 'evt_1', 'we_nd', now() - interval '10 seconds', NULL),
			('mer_nd', 'test', 'dlv_leased', 'evt_2', 'we_nd', now() - interval '2 seconds', now() + interval '10 seconds'),
			('mer_nd', 'test', 'dlv_during', 'evt_3', 'we_nd', now() - interval '1 second', NULL)`,
	)
	var dbNow time.Time
	if err := db.GetContext(ctx, &dbNow, `SELECT now()`); err != nil {
		t.Fatal(err)
	}
	at, ok, err := NextDue(ctx, db, dbNow.Add(-5*time.Second))
	if err != nil || !ok || dbNow.Sub(at) < 500*time.Millisecond || dbNow.Sub(at) > 2*time.Second {
		t.Errorf("NextDue: %v %v %v; want dlv_during's, about 1 s ago", at, ok, err)
	}
	// A caller's clock ahead of the database's is held to it: what is
	// left is dlv_leased's lease, running out in about 10 s.
	at, ok, err = NextDue(ctx, db, dbNow.Add(time.Hour))
	if err != nil || !ok || at.Sub(dbNow) < 9*time.Second || at.Sub(dbNow) > 11*time.Second {
		t.Errorf("with a clock an hour ahead: %v %v %v; want dlv_leased's lease end, in about 10 s", at, ok, err)
	}
}

// A delivery claimed by a worker that then died (its replica killed) is
// claimable again when its lease runs out: NextDue returns that time, to
// the microsecond, so a worker sleeps until then rather than until its
// next poll; a retry due before it comes first.
func TestNextDueIsTheEndOfALeaseLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_ls', 'ls')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_ls', 'test', 'we_ls', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_ls', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 2) n`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, next_attempt_at) VALUES
			('mer_ls', 'test', 'dlv_claimed', 'evt_1', 'we_ls', now() - interval '1 second')`,
	)
	room := func([]string) map[string]int { return map[string]int{"we_ls": 10} }
	const lease = time.Minute
	jobs, err := Claim(ctx, db, 10, nil, room, lease)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claimed %d, %v; want the one delivery", len(jobs), err)
	}
	// The worker is gone: nothing records the attempt. Another claims
	// nothing until the lease runs out, and is told when that is.
	var until time.Time
	if err := db.GetContext(ctx, &until, `SELECT leased_until FROM webhook_deliveries WHERE id = 'dlv_claimed'`); err != nil {
		t.Fatal(err)
	}
	if again, err := Claim(ctx, db, 10, nil, room, lease); err != nil || len(again) != 0 {
		t.Fatalf("claimed again under the lease: %d, %v", len(again), err)
	}
	at, ok, err := NextDue(ctx, db, time.Now())
	if err != nil || !ok || !at.Equal(until) {
		t.Errorf("NextDue: %v %v %v; want the lease's end, %v", at, ok, err, until)
	}
	// A retry due before the lease ends is the earlier wake-up.
	execAll(t, db, `INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, next_attempt_at) VALUES
		('mer_ls', 'test', 'dlv_retry', 'evt_2', 'we_ls', now() + interval '10 seconds')`)
	var retry time.Time
	if err := db.GetContext(ctx, &retry, `SELECT next_attempt_at FROM webhook_deliveries WHERE id = 'dlv_retry'`); err != nil {
		t.Fatal(err)
	}
	if at, ok, err := NextDue(ctx, db, time.Now()); err != nil || !ok || !at.Equal(retry) {
		t.Errorf("NextDue with a retry due first: %v %v %v; want %v", at, ok, err, retry)
	}
}

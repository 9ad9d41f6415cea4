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
// claimable: its endpoint is full or disabled) and one leased are not.
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
	// A caller's clock ahead of the database's is held to it.
	if _, ok, err := NextDue(ctx, db, dbNow.Add(time.Hour)); err != nil || ok {
		t.Errorf("with a clock an hour ahead: %v %v; want none", ok, err)
	}
}

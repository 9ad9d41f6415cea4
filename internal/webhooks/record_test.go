package webhooks

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestRecordBatchMovesEachDeliveryOn records one batch of answers of every
// kind and checks each delivery and its attempt rows as Record promises:
// a 2xx succeeds, a failure is retried after its schedule step or fails
// past the last one, an exhausted job is failed unsent, an interrupted
// attempt is recorded before the answered one, and a delivery that a later
// claim moved on is left as it is (its answered attempt still recorded).
func TestRecordBatchMovesEachDeliveryOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	schedule := []time.Duration{time.Minute, time.Hour}
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_rec', 'rec')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_rec', 'test', 'we_rec', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_rec', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 6) n`,
		// As claimed: attempts is the attempt in flight, the lease taken.
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, attempts, leased_until) VALUES
			('mer_rec', 'test', 'dlv_ok', 'evt_1', 'we_rec', 1, now() + interval '15 seconds'),
			('mer_rec', 'test', 'dlv_retry', 'evt_2', 'we_rec', 2, now() + interval '15 seconds'),
			('mer_rec', 'test', 'dlv_last', 'evt_3', 'we_rec', 3, now() + interval '15 seconds'),
			('mer_rec', 'test', 'dlv_unsent', 'evt_4', 'we_rec', 4, now() + interval '15 seconds'),
			('mer_rec', 'test', 'dlv_resumed', 'evt_5', 'we_rec', 2, now() + interval '15 seconds'),
			('mer_rec', 'test', 'dlv_moved', 'evt_6', 'we_rec', 3, now() + interval '15 seconds')`,
	)
	job := func(id string, attempt int, interrupted ...int) Job {
		return Job{Delivery: Delivery{MerchantID: "mer_rec", Mode: tenant.Test, ID: id, UpdatedAt: time.Now()},
			Attempt: attempt, Interrupted: interrupted}
	}
	now := time.Now()
	ok := Result{StartedAt: now, Latency: time.Millisecond, Status: 200, Body: []byte("thanks")}
	bad := Result{StartedAt: now, Latency: time.Millisecond, Status: 500, Body: []byte("oops\x00")}
	answers := []Answer{
		{job("dlv_ok", 1), ok},
		{job("dlv_retry", 2), bad},
		{job("dlv_last", 3), Result{StartedAt: now, Err: "connection refused"}}, // past the schedule
		{job("dlv_unsent", 4), Result{NotSent: true}},
		{job("dlv_resumed", 2, 1), ok},
		{job("dlv_moved", 2), ok}, // a later claim made attempt 3
	}
	// The recording commits without waiting for the disk (the setting
	// lasts to the end of the transaction that recorded).
	var commit string
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
			return err
		}
		if err := Record(ctx, tx, answers, schedule); err != nil {
			return err
		}
		return tx.GetContext(ctx, &commit, `SHOW synchronous_commit`)
	}); err != nil {
		t.Fatal(err)
	}
	if commit != "off" {
		t.Errorf("synchronous_commit after Record: %s, want off", commit)
	}

	type row struct {
		ID       string  `db:"id"`
		Status   string  `db:"status"`
		Leased   bool    `db:"leased"`
		InSecs   float64 `db:"in_secs"`
		LastErr  *string `db:"last_error"`
		Attempts string  `db:"attempts"`
	}
	var rows []row
	err := db.SelectContext(ctx, &rows, `SELECT d.id, d.status, d.leased_until IS NOT NULL AS leased,
			extract(epoch FROM d.next_attempt_at - now()) AS in_secs, d.last_error,
			coalesce((SELECT string_agg(a.attempt || ':' || coalesce(a.status::text, a.error), ',' ORDER BY a.attempt)
				FROM webhook_attempts a WHERE a.merchant_id = d.merchant_id AND a.delivery_id = d.id), '') AS attempts
		FROM webhook_deliveries d ORDER BY d.id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]row{}
	for _, r := range rows {
		got[r.ID] = r
	}
	check := func(id, status string, leased bool, attempts string) row {
		t.Helper()
		r := got[id]
		if r.Status != status || r.Leased != leased || r.Attempts != attempts {
			t.Errorf("%s: status %s, leased %v, attempts %q; want %s, %v, %q", id, r.Status, r.Leased, r.Attempts, status, leased, attempts)
		}
		return r
	}
	check("dlv_ok", StatusSucceeded, false, "1:200")
	// The second attempt of the cycle failed: the next waits schedule[1].
	if r := check("dlv_retry", StatusPending, false, "2:500"); r.InSecs < 3590 || r.InSecs > 3610 || r.LastErr == nil || *r.LastErr != "HTTP 500" {
		t.Errorf("dlv_retry: due in %.0f s with last error %q; want about 3600 s, HTTP 500", r.InSecs, deref(r.LastErr))
	}
	check("dlv_last", StatusFailed, false, "3:connection refused")
	if r := check("dlv_unsent", StatusFailed, false, ""); deref(r.LastErr) != interruptedError {
		t.Errorf("dlv_unsent: last error %q", deref(r.LastErr))
	}
	check("dlv_resumed", StatusSucceeded, false, "1:"+interruptedError+",2:200")
	check("dlv_moved", StatusPending, true, "2:200")
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// execAll runs a test's setup statements, failing it on the first error.
func execAll(t *testing.T, db *store.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

package webhooks

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A 410 Gone disables its endpoint and records why and when; a 429 or 503
// with Retry-After is retried after the wait it asks for, held within the
// schedule's shortest and longest step; a Retry-After on another status
// is ignored.
func TestRecordGoneAndRetryAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	schedule := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute}
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_ra', 'ra')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES
			('mer_ra', 'test', 'we_gone', 'https://hooks.example.com/gone', 's'),
			('mer_ra', 'test', 'we_busy', 'https://hooks.example.com/busy', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_ra', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 6) n`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, attempts, leased_until) VALUES
			('mer_ra', 'test', 'dlv_gone', 'evt_1', 'we_gone', 1, now() + interval '15 seconds'),
			('mer_ra', 'test', 'dlv_short', 'evt_2', 'we_busy', 1, now() + interval '15 seconds'),
			('mer_ra', 'test', 'dlv_long', 'evt_3', 'we_busy', 1, now() + interval '15 seconds'),
			('mer_ra', 'test', 'dlv_within', 'evt_4', 'we_busy', 1, now() + interval '15 seconds'),
			('mer_ra', 'test', 'dlv_500', 'evt_5', 'we_busy', 1, now() + interval '15 seconds'),
			('mer_ra', 'test', 'dlv_plain', 'evt_6', 'we_busy', 1, now() + interval '15 seconds')`,
	)
	job := func(id, ep string) Job {
		return Job{Delivery: Delivery{MerchantID: "mer_ra", Mode: tenant.Test, ID: id, EndpointID: ep, UpdatedAt: time.Now()}, Attempt: 1}
	}
	wait := func(d time.Duration) *time.Duration { return &d }
	now := time.Now()
	answers := []Answer{
		{job("dlv_gone", "we_gone"), Result{StartedAt: now, Status: 410}},
		{job("dlv_short", "we_busy"), Result{StartedAt: now, Status: 429, RetryAfter: wait(time.Second)}},
		{job("dlv_long", "we_busy"), Result{StartedAt: now, Status: 503, RetryAfter: wait(10 * time.Hour)}},
		{job("dlv_within", "we_busy"), Result{StartedAt: now, Status: 503, RetryAfter: wait(12 * time.Minute)}},
		{job("dlv_500", "we_busy"), Result{StartedAt: now, Status: 500, RetryAfter: wait(12 * time.Minute)}},
		{job("dlv_plain", "we_busy"), Result{StartedAt: now, Status: 429}},
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return Record(ctx, tx, answers, schedule) }); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		"dlv_gone": time.Minute, "dlv_short": time.Minute, "dlv_long": 30 * time.Minute,
		"dlv_within": 12 * time.Minute, "dlv_500": time.Minute, "dlv_plain": time.Minute,
	}
	for id, w := range want {
		var secs float64
		err := db.GetContext(ctx, &secs, `SELECT extract(epoch FROM next_attempt_at - updated_at) FROM webhook_deliveries WHERE id = $1`, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Duration(secs * float64(time.Second)); d < w-time.Second || d > w+time.Second {
			t.Errorf("%s: retried after %v, want %v", id, d, w)
		}
	}
	gone, err := Get(ctx, db, "we_gone")
	if err != nil {
		t.Fatal(err)
	}
	if gone.Enabled || gone.DisabledReason == nil || *gone.DisabledReason != DisabledGone || gone.DisabledAt == nil {
		t.Errorf("after a 410: %+v", gone)
	}
	if busy, _ := Get(ctx, db, "we_busy"); !busy.Enabled || busy.DisabledReason != nil {
		t.Errorf("after 429 and 503: %+v", busy)
	}
	// Enabling clears the reason; an operator's disable records its own.
	if err := SetEnabled(ctx, db, "we_gone", true); err != nil {
		t.Fatal(err)
	}
	if e, _ := Get(ctx, db, "we_gone"); !e.Enabled || e.DisabledReason != nil || e.DisabledAt != nil {
		t.Errorf("enabled again: %+v", e)
	}
	if err := SetEnabled(ctx, db, "we_gone", false); err != nil {
		t.Fatal(err)
	}
	if e, _ := Get(ctx, db, "we_gone"); e.Enabled || deref(e.DisabledReason) != DisabledByOperator {
		t.Errorf("disabled by an operator: %+v", e)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Fri, 27 Nov 2026 12:05:00 GMT", 5 * time.Minute, true},
		{"Fri, 27 Nov 2026 11:00:00 GMT", 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %v %v, want %v %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// claimAfterExec is the pool, claiming whatever is due after each of
// Record's statements, as another worker could between them.
type claimAfterExec struct {
	*store.DB
	t       *testing.T
	claimed []string
}

func (c *claimAfterExec) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := c.DB.ExecContext(ctx, query, args...)
	all := func(eps []string) map[string]int {
		room := map[string]int{}
		for _, ep := range eps {
			room[ep] = 10
		}
		return room
	}
	jobs, cerr := Claim(ctx, c.DB, 10, nil, all, time.Minute)
	if cerr != nil {
		c.t.Fatal(cerr)
	}
	for _, j := range jobs {
		c.claimed = append(c.claimed, j.ID)
	}
	return res, err
}

// An endpoint that answered 410 is disabled before the answer is
// recorded: recorded first, its retry (here due at once) could be claimed
// and sent to the gone endpoint between the two statements.
func TestGoneEndpointDisabledBeforeItsRetryFallsDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_gr', 'gr')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_gr', 'test', 'we_gr', 'https://hooks.example.com/gone', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data) VALUES ('mer_gr', 'test', 'evt_gr', 'invoice.created', '{}')`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, attempts, leased_until)
			VALUES ('mer_gr', 'test', 'dlv_gr', 'evt_gr', 'we_gr', 1, now() + interval '15 seconds')`,
	)
	job := Job{Delivery: Delivery{MerchantID: "mer_gr", Mode: tenant.Test, ID: "dlv_gr", EventID: "evt_gr", EndpointID: "we_gr",
		UpdatedAt: time.Now()}, Attempt: 1}
	q := &claimAfterExec{DB: db, t: t}
	if err := Record(ctx, q, []Answer{{job, Result{StartedAt: time.Now(), Status: 410}}}, []time.Duration{0}); err != nil {
		t.Fatal(err)
	}
	if len(q.claimed) != 0 {
		t.Errorf("claimed %v while Record ran: a second request to a gone endpoint", q.claimed)
	}
	var status string
	if err := db.GetContext(ctx, &status, `SELECT status FROM webhook_deliveries WHERE id = 'dlv_gr'`); err != nil || status != StatusPending {
		t.Errorf("delivery after the 410: %q, %v (want it pending, for the endpoint's return)", status, err)
	}
}

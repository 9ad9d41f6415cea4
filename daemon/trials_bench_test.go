package daemon_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Figure for issue 23 (trials ending), beside BenchmarkRenewals, rerun with:
//
//	go test ./daemon -run XXX -bench 'BenchmarkTrialEnds' -benchtime 1x -timeout 30m
//
// (TOLLGATE_BENCH_SUBS changes the 10,000 trials.) Each run makes N
// trialing subscriptions of a weekly plan whose trials end at one
// test-clock advance (their notices already sent) and times the advance: it
// answers only when every first charge (rail charge, payment, subscription,
// subscription.active and its webhook delivery row) is written.
func BenchmarkTrialEnds(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_SUBS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		bd := setup(b, func(c *daemon.Config) { c.RateLimits = false })
		m := bd.merchant("bench")
		_, key := bd.key(m, tenant.Test)
		bd.endpoint(m, "https://example.invalid/hooks")
		c := bd.client(key)
		ctx := context.Background()
		days := 14
		p, err := c.CreatePlan(ctx, client.PlanParams{Name: "Weekly", Amount: "5000000", Interval: "week", TrialDays: &days})
		if err != nil {
			b.Fatal(err)
		}
		seedTrials(b, bd, m, p.ID, n)
		b.StartTimer()
		start := time.Now()
		if _, err := c.AdvanceTestClock(ctx, client.TestClockAdvanceParams{By: "2d"}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.StopTimer()
		var charged int
		if err := bd.db.Get(&charged, `SELECT count(*) FROM payments WHERE subscription_id IS NOT NULL`); err != nil {
			b.Fatal(err)
		}
		if charged != n {
			b.Fatalf("%d of %d trials charged", charged, n)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "first_charges/s")
		b.StartTimer()
	}
}

// seedTrials writes n trialing subscriptions of the plan as checkout and
// the notice leave them: customer, activation on the rail (nothing
// charged), trial_end a day from now and due then.
func seedTrials(b *testing.B, bd *bundle, merchant, planID string, n int) {
	b.Helper()
	_, err := bd.db.Exec(`WITH p AS (SELECT * FROM plans WHERE id = $2),
		c AS (INSERT INTO customers (merchant_id, mode, id, external_customer_id)
			SELECT $1, 'test', 'cus_bench' || g, 'bench' || g FROM generate_series(1, $3) g RETURNING id),
		r AS (INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
			SELECT $1, 'test', 'act:' || id, 'activate', 'act:' || id, '0x4242424242424242424242424242424242424242', '0x0', 0, 'succeeded', '0x', now() FROM c)
		INSERT INTO subscriptions (merchant_id, mode, id, plan_id, product_id, customer_id, payer, status, usage_type, amount, interval,
			anchor, period_index, current_period_start, current_period_end, next_action_at, authorization_key, created_at, trial_end)
		SELECT $1, 'test', 'sub_' || c.id, p.id, p.product_id, c.id, '0x4242424242424242424242424242424242424242', 'trialing', p.usage_type,
			p.amount, p.interval, now() + interval '1 day', 0, now() - interval '13 days', now() + interval '1 day', now() + interval '1 day',
			'act:' || c.id, now() - interval '13 days', now() + interval '1 day'
		FROM c, p`, merchant, planID, n)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bd.db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

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

// Figures for issue 10 (renewal throughput), rerun with:
//
//	go test ./daemon -run XXX -bench 'BenchmarkRenewals' -benchtime 1x -count 3 -timeout 30m
//
// (TOLLGATE_BENCH_SUBS changes the 10,000 subscriptions.) Each run makes
// N subscriptions due at one test-clock advance and times the advance: it
// answers only when every renewal (rail charge, payment, subscription,
// event and webhook delivery row) is written.
func BenchmarkRenewals(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_SUBS")); err == nil && v > 0 {
		n = v
	}
	b.Run("licensed", func(b *testing.B) { benchRenewals(b, n, false) })
	b.Run("metered", func(b *testing.B) { benchRenewals(b, n, true) })
}

func benchRenewals(b *testing.B, n int, metered bool) {
	for range b.N {
		b.StopTimer()
		bd := setup(b, func(c *daemon.Config) { c.RateLimits = false })
		m := bd.merchant("bench")
		_, key := bd.key(m, tenant.Test)
		bd.endpoint(m, "https://example.invalid/hooks") // every renewal writes a delivery row too
		c := bd.client(key)
		ctx := context.Background()
		params := client.PlanParams{Name: "Weekly", Amount: "5000000", Interval: "week"}
		if metered {
			meter, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls"})
			if err != nil {
				b.Fatal(err)
			}
			params.UsageType, params.Meter = "metered", meter.ID
			params.PricingModel = []byte(`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":50,"unitAmount":1000},{"upTo":null,"unitAmount":500}]}`)
		}
		p, err := c.CreatePlan(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		seedSubscriptions(b, bd, m, p.ID, n, metered)
		b.StartTimer()
		start := time.Now()
		if _, err := c.AdvanceTestClock(ctx, client.TestClockAdvanceParams{By: "7d2h"}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.StopTimer()
		var renewed int
		if err := bd.db.Get(&renewed, `SELECT count(*) FROM payments WHERE subscription_id IS NOT NULL AND period_end > now() + interval '1 day'`); err != nil {
			b.Fatal(err)
		}
		if renewed != n {
			b.Fatalf("%d of %d renewed", renewed, n)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "renewals/s")
		b.StartTimer()
	}
}

// seedSubscriptions writes n active weekly subscriptions of the plan (as
// checkout leaves them: customer, activation on the rail, first payment for
// a licensed plan) and, for a metered plan, 100 usage events for each
// customer in the first period: 1,000,000 events for 10,000.
func seedSubscriptions(b *testing.B, bd *bundle, merchant, planID string, n int, metered bool) {
	b.Helper()
	_, err := bd.db.Exec(`WITH p AS (SELECT * FROM plans WHERE id = $2),
		c AS (INSERT INTO customers (merchant_id, mode, id, external_customer_id)
			SELECT $1, 'test', 'cus_bench' || g, 'bench' || g FROM generate_series(1, $3) g RETURNING id),
		r AS (INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
			SELECT $1, 'test', 'act:' || id, 'activate', 'act:' || id, '0x4242424242424242424242424242424242424242', '0x0', 0, 'succeeded', '0x', now() FROM c)
		INSERT INTO subscriptions (merchant_id, mode, id, plan_id, product_id, customer_id, payer, status, usage_type, amount, interval,
			anchor, period_index, current_period_start, current_period_end, next_action_at, authorization_key, created_at, meter_id, pricing_model)
		SELECT $1, 'test', 'sub_' || c.id, p.id, p.product_id, c.id, '0x4242424242424242424242424242424242424242', 'active', p.usage_type, p.amount,
			p.interval, now(), 0, now(), now() + interval '7 days',
			now() + interval '7 days' + CASE WHEN p.usage_type = 'metered' THEN interval '1 hour' ELSE interval '0' END,
			'act:' || c.id, now(), p.meter_id, p.pricing_model
		FROM c, p`, merchant, planID, n)
	if err != nil {
		b.Fatal(err)
	}
	if !metered {
		return
	}
	_, err = bd.db.Exec(`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp)
		SELECT $1, 'test', 'me_bench' || g || '_' || e, (SELECT meter_id FROM plans WHERE id = $2), 'cus_bench' || g, 1 + e % 3,
			now() + (e || ' minutes')::interval
		FROM generate_series(1, $3) g, generate_series(1, 100) e`, merchant, planID, n)
	if err != nil {
		b.Fatal(err)
	}
	// The hour and day buckets ingestion would have kept: rating reads them.
	_, err = bd.db.Exec(`INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
			event_count, value_sum, value_max, last_value, last_at, last_event_id)
		SELECT e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), 0,
			count(*), sum(e.value), max(e.value), (array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
			(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
		FROM meter_events e CROSS JOIN (VALUES ('hour'), ('day')) AS g (grain)
		WHERE e.merchant_id = $1
		GROUP BY e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC')`, merchant)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bd.db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

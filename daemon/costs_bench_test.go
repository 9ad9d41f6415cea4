package daemon_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// BenchmarkCosts is the cost curve of the hot operations as the data
// grows: for each size in TOLLGATE_BENCH_SIZES (stored usage events,
// default 100000), one merchant holds that many events over 30 days and a
// tenth as many metered subscriptions, with as many events in its feed, and
// each operation is timed on it (p50, p99 and req/s, 32 clients). Compare a
// figure across sizes: the goal is that none grows with the data.
//
//	TOLLGATE_BENCH_SIZES=100000,1000000,10000000 go test ./daemon -run '^$' -bench 'BenchmarkCosts' -benchtime 2000x -timeout 120m
//
// The renewal run renews 1,000 subscriptions due at one test-clock advance
// among all those stored; the disk figures are the tables' total sizes
// (every partition's, with indexes and TOAST) divided by the rows; the
// retention drop, run last since it removes data, detaches and drops the
// weeks of usage events older than 14 days.
func BenchmarkCosts(b *testing.B) {
	sizes := []int{100_000}
	if v := os.Getenv("TOLLGATE_BENCH_SIZES"); v != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 10_000 {
				b.Fatalf("TOLLGATE_BENCH_SIZES: %q is not a size of at least 10000", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) { benchCosts(b, n) })
	}
}

// costsData is one size's merchant: its key, a customer with events, its
// subscription, and cursors into its lists.
type costsData struct {
	bd                  *bundle
	key, customer, sub  string
	from, to            time.Time
	deepSubs, deepFeed  string
	events, subs, feeds int
}

func benchCosts(b *testing.B, n int) {
	d := seedCosts(b, n)
	get := func(path string) func(b *testing.B) {
		// A page of nothing would time nothing: each list must find rows.
		if code, _, body := d.bd.raw("GET", path, d.key, ""); code != 200 || strings.Contains(path, "limit=") && !strings.Contains(body, `"data":[{`) {
			b.Fatalf("GET %s: %d %s", path, code, body)
		}
		return func(b *testing.B) { load(b, "GET", d.bd.url+path, d.key, "") }
	}
	usage := url.Values{"meter": {"tokens"}, "window": {"day"},
		"from": {d.from.Format(time.RFC3339)}, "to": {d.to.Format(time.RFC3339)}}
	b.Run("ingest", func(b *testing.B) {
		load(b, "POST", d.bd.url+"/v1/meter-events", d.key, `{"event_name":"tokens","value":"3","external_customer_id":"bench7"}`)
	})
	b.Run("entitlement-check", get("/v1/customers/"+d.customer+"/entitlements/api"))
	b.Run("usage-summary", get("/v1/customers/"+d.customer+"/usage?"+usage.Encode()))
	b.Run("upcoming-charge", get("/v1/subscriptions/"+d.sub+"/upcoming"))
	b.Run("list-first-page", get("/v1/subscriptions?limit=25"))
	b.Run("list-deep-page", get("/v1/subscriptions?limit=25&before="+url.QueryEscape(d.deepSubs)))
	b.Run("event-feed-page", get("/v1/events?limit=25&before="+url.QueryEscape(d.deepFeed)))
	var once sync.Once
	var rate float64
	b.Run("renewal-run", func(b *testing.B) {
		// The run changes what is stored, so it happens once; every call
		// reports that one figure.
		once.Do(func() { rate = renewThousand(b, d) })
		b.ReportMetric(rate, "renewals/s")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("disk", func(b *testing.B) {
		var eventBytes, subBytes float64
		if err := d.bd.db.Get(&eventBytes, `SELECT sum(pg_total_relation_size(relid))::float8
			FROM (SELECT relid FROM pg_partition_tree('meter_events') UNION ALL SELECT 'usage_buckets'::regclass) t`); err != nil {
			b.Fatal(err)
		}
		if err := d.bd.db.Get(&subBytes, `SELECT pg_total_relation_size('subscriptions')::float8`); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(eventBytes/float64(d.events), "bytes/event")
		b.ReportMetric(subBytes/float64(d.subs), "bytes/subscription")
		b.ReportMetric(0, "ns/op")
	})
	var dropOnce sync.Once
	var dropped int
	var took time.Duration
	b.Run("retention-drop", func(b *testing.B) {
		// Usage older than 14 days goes: the whole weeks of the 30 seeded
		// days before that. Once, like the renewal run.
		dropOnce.Do(func() {
			start := time.Now()
			out, err := partitions.Drop(context.Background(), d.bd.db, partitions.MeterEvents(), 14*24*time.Hour, time.Now())
			took = time.Since(start)
			if err != nil || len(out.Dropped) == 0 {
				b.Fatalf("dropped %v, kept %v: %v", out.Dropped, out.Kept, err)
			}
			dropped = len(out.Dropped)
		})
		b.ReportMetric(float64(took.Microseconds())/1000/float64(dropped), "ms/partition")
		b.ReportMetric(float64(dropped), "partitions")
		b.ReportMetric(0, "ns/op")
	})
}

// seedCosts writes one size's data with set-based SQL, as the API would
// have left it: n/10 metered weekly subscriptions (customers bench1…), n
// usage events of the first 1,000 customers over the last 30 days with
// their hourly and daily totals, and n/10 events in the feed.
func seedCosts(b *testing.B, n int) costsData {
	b.Helper()
	bd := setup(b, func(c *daemon.Config) { c.RateLimits = false })
	m := bd.merchant("costs")
	_, key := bd.key(m, tenant.Test)
	c := bd.client(key)
	ctx := context.Background()
	meter, err := c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := c.CreatePlan(ctx, client.PlanParams{Name: "Weekly", Amount: "5000000", Interval: "week", UsageType: "metered", Meter: meter.ID,
		PricingModel: []byte(`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":50,"unitAmount":1000},{"upTo":null,"unitAmount":500}]}`)})
	if err != nil {
		b.Fatal(err)
	}
	d := costsData{bd: bd, key: key, customer: "cus_bench1", sub: "sub_cus_bench1", events: n, subs: n / 10, feeds: n / 10}
	seeded := time.Now()
	seedSubscriptions(b, bd, m, p.ID, d.subs, false)
	d.to = time.Now().UTC().Truncate(24 * time.Hour)
	d.from = d.to.AddDate(0, 0, -30)
	exec := func(q string, args ...any) {
		if _, err := bd.db.Exec(q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	// Distinct creation times, newest first by number, so that a cursor
	// can point deep into the list.
	exec(`UPDATE subscriptions SET created_at = now() - substr(id, 14)::int * interval '1 second' WHERE merchant_id = $1`, m)
	// Weekly partitions for the seeded month, as a database a while past
	// its upgrade has, in place of the one a migration made of the table
	// as it stood (empty here, covering every time up to next week).
	exec(`DROP TABLE meter_events_p00000000`)
	if _, err := partitions.Ensure(ctx, bd.db, time.Now()); err != nil {
		b.Fatal(err)
	}
	exec(`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp)
		SELECT $1, 'test', 'me_c' || g, $2, 'cus_bench' || (1 + g % $4), g % 97, $5::timestamptz + (g * (30 * 86400.0 / $3)) * interval '1 second'
		FROM generate_series(1, $3) AS g`, m, meter.ID, n, min(1000, d.subs), d.from)
	exec(`INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
			event_count, value_sum, value_max, last_value, last_at, last_event_id)
		SELECT e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), 0,
			count(*), sum(e.value), max(e.value), (array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
			(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
		FROM meter_events e CROSS JOIN (VALUES ('hour'), ('day')) AS g (grain)
		WHERE e.merchant_id = $1
		GROUP BY e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC')`, m)
	// The days before today rolled up, as the job leaves them.
	exec(`INSERT INTO usage_rollups (merchant_id, mode, through) VALUES ($1, 'test', $2)
		ON CONFLICT (merchant_id, mode) DO UPDATE SET through = EXCLUDED.through`, m, d.to)
	exec(`INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
		SELECT $1, 'test', 'evt_c' || g, 'invoice.created', jsonb_build_object('object', 'invoice', 'id', 'inv_c' || g),
			now() - g * interval '1 second', now() - g * interval '1 second'
		FROM generate_series(1, $2) AS g`, m, d.feeds)
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "api", Name: "API", Type: "metered", Meter: meter.ID}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "api", ExternalCustomerID: "bench1", LimitValue: "1000000000000"}); err != nil {
		b.Fatal(err)
	}
	if _, err := bd.db.Exec(`VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	half := time.Now().Add(-time.Duration(d.subs/2) * time.Second).UTC()
	d.deepSubs = half.Format(time.RFC3339Nano)
	d.deepFeed = time.Now().Add(-time.Duration(d.feeds/2) * time.Second).UTC().Format(time.RFC3339Nano)
	b.Logf("seeded %d events, %d subscriptions, %d feed events in %s", n, d.subs, d.feeds, time.Since(seeded).Round(time.Second))
	return d
}

// renewThousand leaves 1,000 of the subscriptions due in a week and the
// others a year away (vacuumed), advances the test clock past the week and
// returns renewals per second of the advance.
func renewThousand(b *testing.B, d costsData) float64 {
	b.Helper()
	if _, err := d.bd.db.Exec(`UPDATE subscriptions SET current_period_end = current_period_end + interval '365 days',
		next_action_at = next_action_at + interval '365 days' WHERE substr(id, 14)::int > 1000`); err != nil {
		b.Fatal(err)
	}
	// The update above rewrote every row but a thousand: each left behind
	// a dead entry in the due indexes, at its old due time, inside the
	// advance's range. Unvacuumed, the advance's last claim visits them
	// all once (the 99% of the table the setup moved, not the renewals'
	// cost), so the table is vacuumed, as autovacuum leaves it after such
	// an update, before the run is timed.
	if _, err := d.bd.db.Exec(`VACUUM ANALYZE subscriptions`); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := d.bd.client(d.key).AdvanceTestClock(context.Background(), client.TestClockAdvanceParams{By: "7d2h"}); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	var renewed int
	if err := d.bd.db.Get(&renewed, `SELECT count(*) FROM subscriptions WHERE period_index > 0`); err != nil {
		b.Fatal(err)
	}
	if want := min(1000, d.subs); renewed != want {
		b.Fatalf("%d of %d renewed", renewed, want)
	}
	return float64(renewed) / took.Seconds()
}

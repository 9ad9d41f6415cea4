package daemon_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// Figures for usage summaries and alerts, rerun with:
//
//	go test ./daemon -run '^$' -bench 'BenchmarkIngestAlerts' -benchtime 150x -count 3
//	go test ./daemon -run '^$' -bench 'BenchmarkUsageSummary' -benchtime 15000x
//	TOLLGATE_BENCH_RATE=1000 go test ./daemon -run '^$' -bench 'BenchmarkUsageSummary' -benchtime 15000x
//	TOLLGATE_BENCH_EVENTS=10000000 TOLLGATE_BENCH_RATE=1000 go test ./daemon -run '^$' -bench 'BenchmarkUsageSummary' -benchtime 15000x -timeout 60m
//	go test ./daemon -run '^$' -bench 'BenchmarkAlertLatency' -benchtime 200x
//
// BenchmarkIngestAlerts sends 500-event batches over 100 customers from 4
// clients, first with no alert, then with 100 active usage alerts on the
// meter watching every customer (thresholds never reached, so the alert
// job checks every customer of every batch and fires nothing), in the same
// run: compare events/s.
//
// BenchmarkUsageSummary stores TOLLGATE_BENCH_EVENTS events (default
// 100,000) for one customer over 30 days, straight into the tables with
// set-based SQL (the hourly totals as concurrent ingestion leaves them, the
// daily ones as the roll-up job does),
// vacuums and checkpoints, then asks for the 30 daily windows over HTTP
// and reports p50 and p99:
// from 4 clients one request at a time each, or, with TOLLGATE_BENCH_RATE,
// at that many requests a second whatever the latency (open loop; a
// request's latency counts from its scheduled start).
//
// BenchmarkAlertLatency reports the time from the answer to an event that
// crosses a usage alert's threshold to alert.triggered's arrival at a
// webhook receiver on loopback (p50, p99): the alert job's poll, its
// evaluation and the delivery.

func BenchmarkIngestAlerts(b *testing.B) {
	u := startUsageBench(b)
	ctx := context.Background()
	m, customers := u.tokensMeter(b, 100)
	round := 0
	ingest := func(b *testing.B) {
		round++
		r := round
		var next atomic.Int64
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := next.Add(1)
					if n > int64(b.N) {
						return
					}
					res, err := u.c.SendMeterEvents(ctx, benchBatch(n+int64(r)*1e9, customers))
					if err == nil && res.Accepted != 500 {
						err = fmt.Errorf("accepted %d", res.Accepted)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)*500/time.Since(start).Seconds(), "events/s")
	}
	b.Run("no-alerts", ingest)
	for i := 0; i < 100; i++ {
		if _, err := u.c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: m.ID, Threshold: strconv.Itoa(1_000_000_000 + i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("100-alerts", ingest)
	var fired int
	_ = u.db.Get(&fired, `SELECT count(*) FROM alert_firings`)
	if fired != 0 {
		b.Fatalf("%d alerts fired", fired)
	}
}

func BenchmarkUsageSummary(b *testing.B) {
	u := startUsageBench(b)
	ctx := context.Background()
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	m, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		b.Fatal(err)
	}
	e, err := u.c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "tokens", Value: "1", ExternalCustomerID: "big"})
	if err != nil {
		b.Fatal(err)
	}
	cus := *e.CustomerID
	end := time.Now().UTC().Truncate(24 * time.Hour)
	start := end.AddDate(0, 0, -30)
	seeded := time.Now()
	// n events spread evenly over the 30 days, then their hourly and daily
	// totals as concurrent ingestion leaves them: each bucket split over 4
	// shards.
	if _, err := u.db.Exec(`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp)
		SELECT $1, $2, 'me_b' || g, $3, $4, g % 97, $5::timestamptz + (g * (30 * 86400.0 / $6)) * interval '1 second'
		FROM generate_series(1, $6) AS g`, u.s.MerchantID, u.s.Mode, m.ID, cus, start, n); err != nil {
		b.Fatal(err)
	}
	if _, err := u.db.Exec(`DELETE FROM usage_buckets WHERE merchant_id = $1`, u.s.MerchantID); err != nil {
		b.Fatal(err)
	}
	if _, err := u.db.Exec(`INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
			event_count, value_sum, value_max, last_value, last_at, last_event_id)
		SELECT e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), abs(hashtext(e.id)) % 4,
			count(*), sum(e.value), max(e.value), (array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
			(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
		FROM meter_events e CROSS JOIN (VALUES ('hour'), ('day')) AS g (grain)
		WHERE e.merchant_id = $1 AND e.customer_id IS NOT NULL
		GROUP BY e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), abs(hashtext(e.id)) % 4`, u.s.MerchantID); err != nil {
		b.Fatal(err)
	}
	// The days before today rolled up, as the job leaves them.
	if _, err := u.db.Exec(`INSERT INTO usage_rollups (merchant_id, mode, through) VALUES ($1, $2, $3)
		ON CONFLICT (merchant_id, mode) DO UPDATE SET through = EXCLUDED.through`, u.s.MerchantID, u.s.Mode, end); err != nil {
		b.Fatal(err)
	}
	// The seed's aftermath is not the summary's cost: vacuum (autovacuum
	// would, later), then write its dirty pages out now rather than under
	// the measurement.
	for _, q := range []string{`VACUUM ANALYZE meter_events`, `VACUUM ANALYZE usage_buckets`, `CHECKPOINT`} {
		if _, err := u.db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d events in %s", n, time.Since(seeded).Round(time.Second))
	p := client.UsageParams{Meter: "tokens", From: &start, To: &end, Window: "day"}
	var sum string
	if err := u.db.Get(&sum, `SELECT sum(value)::text FROM meter_events WHERE merchant_id = $1 AND event_timestamp >= $2 AND event_timestamp < $3`,
		u.s.MerchantID, start, end); err != nil {
		b.Fatal(err)
	}
	if s, err := u.c.GetUsage(ctx, cus, p); err != nil || len(s.Windows) != 30 || s.Value != sum {
		b.Fatalf("%+v %v; the events sum to %s", s, err, sum)
	}
	// The parent runs once, so the events are stored once; the measurement
	// runs as often as the framework wants.
	b.Run("30-daily-windows", func(b *testing.B) { summaryLatency(b, u, cus, p, n) })
}

// summaryLatency asks for the usage summary p b.N times (see
// BenchmarkUsageSummary) and reports p50, p99 and the rate. Open loop, it
// also asks b.N times for /healthz on the same server at the same rate, in
// alternate one-second rounds, so both see the same machine: the
// yardstick's p99 is the floor of this machine at this moment (scheduling,
// the generator, loopback HTTP), and p99-ratio is the summary's p99 over
// it. slip-p99-ms is how late the generator started its sends: a tail
// there is the generator's, not the server's.
func summaryLatency(b *testing.B, u *usageBench, cus string, p client.UsageParams, n int) {
	ctx := context.Background()
	// At most 128 connections, as a load balancer in front would keep.
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 128, MaxIdleConnsPerHost: 128}}
	cc := client.New(u.url, u.key, client.WithMaxRetries(0), client.WithHTTPClient(hc))
	var fails atomic.Int64
	summary := func() {
		if _, err := cc.GetUsage(ctx, cus, p); err != nil && fails.Add(1) == 1 {
			b.Error(err)
		}
	}
	rate, _ := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_RATE"))
	if rate <= 0 {
		b.ResetTimer()
		began := time.Now()
		lat := summaryClosedLoop(b.N, 4, summary)
		elapsed := time.Since(began)
		b.StopTimer()
		b.ReportMetric(pctMs(lat, 50), "p50-ms")
		b.ReportMetric(pctMs(lat, 99), "p99-ms")
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
		b.ReportMetric(float64(n), "events")
		b.ReportMetric(0, "ns/op")
		return
	}
	hello := func() {
		res, err := hc.Get(u.url + "/healthz")
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		if err != nil && fails.Add(1) == 1 {
			b.Error(err)
		}
	}
	// One untimed round of each at the rate first: the first second at a
	// new rate grows the HTTP and PostgreSQL connection pools (a connection
	// opened, then each statement prepared on it), which is the pools'
	// start-up, not the summary's cost; left in, it was most of the p99.
	sendOpenLoop(rate, rate, hello)
	sendOpenLoop(rate, rate, summary)
	b.ResetTimer()
	var lat, slip, yard, yslip []time.Duration
	var elapsed time.Duration
	for done := 0; done < b.N; done += rate {
		k := min(rate, b.N-done)
		l, s, _ := sendOpenLoop(k, rate, hello)
		yard, yslip = append(yard, l...), append(yslip, s...)
		l, s, e := sendOpenLoop(k, rate, summary)
		lat, slip, elapsed = append(lat, l...), append(slip, s...), elapsed+e
	}
	b.StopTimer()
	b.ReportMetric(pctMs(lat, 50), "p50-ms")
	b.ReportMetric(pctMs(lat, 99), "p99-ms")
	b.ReportMetric(pctMs(lat, 100), "max-ms")
	b.ReportMetric(pctMs(yard, 50), "hello-p50-ms")
	b.ReportMetric(pctMs(yard, 99), "hello-p99-ms")
	b.ReportMetric(pctMs(lat, 99)/max(pctMs(yard, 99), 0.001), "p99-ratio")
	b.ReportMetric(pctMs(slip, 99), "slip-p99-ms")
	b.ReportMetric(pctMs(yslip, 99), "hello-slip-p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(n), "events")
	b.ReportMetric(loadAverage(), "load1")
	b.ReportMetric(0, "ns/op")
}

// sendOpenLoop calls do n times at rate a second, call i due at the start
// plus i/rate whatever the others' latency, and returns each call's latency
// counted from when it was due, how late it was started, and the time the
// whole took.
func sendOpenLoop(n, rate int, do func()) (lat, slip []time.Duration, elapsed time.Duration) {
	lat, slip = make([]time.Duration, n), make([]time.Duration, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range n {
		due := began.Add(time.Duration(i) * time.Second / time.Duration(rate))
		time.Sleep(time.Until(due))
		wg.Go(func() {
			slip[i] = time.Since(due)
			do()
			lat[i] = time.Since(due)
		})
	}
	wg.Wait()
	return lat, slip, time.Since(began)
}

// summaryClosedLoop calls do n times from c clients, one call at a time each, and
// returns the calls' latencies.
func summaryClosedLoop(n, c int, do func()) []time.Duration {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t0 := time.Now()
				do()
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	return lat
}

// pctMs is the p-th percentile of d in milliseconds (p 100: the largest);
// it sorts d.
func pctMs(d []time.Duration, p int) float64 {
	slices.Sort(d)
	return float64(d[min(len(d)-1, len(d)*p/100)].Microseconds()) / 1000
}

// loadAverage is the machine's one-minute load average (0 when unknown),
// reported beside the figures: the machine is shared.
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return f
}

// BenchmarkAlertLatency times alert.triggered from the answer to the
// request whose event crossed the threshold to the webhook's arrival at a
// receiver on loopback: one usage alert for every customer, and each
// iteration a new customer's one event that reaches it.
func BenchmarkAlertLatency(b *testing.B) {
	rc := newReceiver(b, nil)
	arrived := make(chan time.Time, 16)
	rc.Before = func(*http.Request) { arrived <- time.Now() }
	u := startUsageBench(b, func(c *daemon.Config) { c.AllowInsecureWebhooks = true })
	ctx := context.Background()
	if _, err := webhooks.Add(ctx, u.db, webhooks.Input{MerchantID: u.s.MerchantID, Mode: u.s.Mode, URL: rc.URL,
		EventTypes: []string{"alert.triggered"}, AllowInsecure: true}); err != nil {
		b.Fatal(err)
	}
	m, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := u.c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: m.ID, Threshold: "100"}); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		// Crossings at random moments, not in step with the job's poll
		// (each would otherwise come just after a poll and wait a whole one).
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
		if _, err := u.c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "tokens", Value: "100", ExternalCustomerID: fmt.Sprint("alert-", i)}); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		select {
		case at := <-arrived:
			samples = append(samples, at.Sub(answered))
		case <-time.After(10 * time.Second):
			b.Fatal("alert.triggered did not arrive within 10 s")
		}
	}
	b.StopTimer()
	slices.Sort(samples)
	pct := func(p float64) float64 {
		return float64(samples[min(len(samples)-1, int(p*float64(len(samples))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(0, "ns/op")
}

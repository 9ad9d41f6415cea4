package daemon_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// Figures for usage summaries and alerts, rerun with:
//
//	go test ./daemon -run XXX -bench 'BenchmarkIngestAlerts|BenchmarkUsageSummary' -benchtime 100x
//	TOLLGATE_BENCH_EVENTS=10000000 go test ./daemon -run XXX -bench BenchmarkUsageSummary -benchtime 2000x -timeout 60m
//
// BenchmarkIngestAlerts sends 500-event batches over 100 customers from 4
// clients, first with no alert, then with 100 active usage alerts on the
// meter watching every customer (thresholds never reached, so the alert
// job checks every customer of every batch and fires nothing), in the same
// run: compare events/s.
//
// BenchmarkUsageSummary stores TOLLGATE_BENCH_EVENTS events (default
// 100,000) for one customer over 30 days, straight into the tables (the
// hourly and daily totals as ingestion keeps them), then asks for 30 daily
// windows over HTTP from 4 clients and reports p50 and p99.

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
	// n events spread evenly over the 30 days, then their totals.
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
		SELECT e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), 0,
			count(*), sum(e.value), max(e.value), (array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
			(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
		FROM meter_events e CROSS JOIN (VALUES ('hour'), ('day')) AS g (grain)
		WHERE e.merchant_id = $1 AND e.customer_id IS NOT NULL
		GROUP BY e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC')`, u.s.MerchantID); err != nil {
		b.Fatal(err)
	}
	if _, err := u.db.Exec(`ANALYZE meter_events; ANALYZE usage_buckets`); err != nil {
		b.Fatal(err)
	}
	p := client.UsageParams{Meter: "tokens", From: &start, To: &end, Window: "day"}
	if s, err := u.c.GetUsage(ctx, cus, p); err != nil || len(s.Windows) != 30 || s.Value == "0" {
		b.Fatalf("%+v %v", s, err)
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	b.ResetTimer()
	began := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if _, err := u.c.GetUsage(ctx, cus, p); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(n), "events")
}

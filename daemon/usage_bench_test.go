package daemon_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// Figures for issue 3, rerun with:
//
//	go test ./daemon -run XXX -bench 'BenchmarkIngest' -benchtime 200x -count 3
//	TOLLGATE_BENCH=1 go test ./daemon -run TestEntitlementCheckLatency -v -timeout 30m
//
// (TOLLGATE_BENCH_EVENTS and TOLLGATE_BENCH_RATE change the 1,000,000 events
// and the 2,000 checks/s; TOLLGATE_BENCH_CUSTOMERS=1000 spreads the ingestion
// batches over 1,000 customers instead of 100, as the load harness does.)
//
// BenchmarkIngest/api sends 500-event batches from 4 concurrent clients to
// a daemon with rate limits off; BenchmarkIngest/raw inserts the same rows
// into meter_events with one multi-row INSERT … ON CONFLICT DO NOTHING per
// 500, over 4 connections, in the same run (raw+keys also inserts the
// idempotency key rows, with a second such statement). Compare events/s.

type usageBench struct {
	db  *store.DB
	url string
	key string
	c   *client.Client
	s   tenant.Scope
}

func startUsageBench(tb testing.TB, opts ...func(*daemon.Config)) *usageBench {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.RateLimits = false
	for _, o := range opts {
		o(&cfg)
	}
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Shutdown(context.Background()) })
	m, err := auth.CreateMerchant(ctx, db, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, db, m.ID, tenant.Test)
	if err != nil {
		tb.Fatal(err)
	}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 256}}
	return &usageBench{db: db, url: d.URL, key: key, c: client.New(d.URL, key, client.WithHTTPClient(hc), client.WithMaxRetries(0)),
		s: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}}
}

// benchBatch is batch n: 500 events, each with an idempotency key, over
// the customers (with 100, each gets 5 events; with 1,000, batch n takes
// 500 of them, one event each).
func benchBatch(n int64, customers []string) []client.MeterEventParams {
	events := make([]client.MeterEventParams, 500)
	for i := range events {
		c := customers[(int(n%int64(len(customers)))*len(events)+i)%len(customers)]
		events[i] = client.MeterEventParams{EventName: "tokens", Value: fmt.Sprint(i % 97), CustomerID: c,
			IdempotencyKey: fmt.Sprintf("b%d-%d", n, i), Properties: []byte(`{"model":"m1"}`)}
	}
	return events
}

// tokensMeter creates the sum meter "tokens" and n customers (100, or
// TOLLGATE_BENCH_CUSTOMERS), each made by a first event of value 0, and
// returns the meter and their ids.
func (u *usageBench) tokensMeter(b *testing.B, n int) (*client.Meter, []string) {
	ctx := context.Background()
	m, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		b.Fatal(err)
	}
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_CUSTOMERS")); err == nil && v > 0 {
		n = v
	}
	customers := make([]string, 0, n)
	for len(customers) < n {
		first := make([]client.MeterEventParams, min(500, n-len(customers)))
		for i := range first {
			first[i] = client.MeterEventParams{EventName: "tokens", Value: "0", ExternalCustomerID: fmt.Sprint("bench-", len(customers)+i)}
		}
		res, err := u.c.SendMeterEvents(ctx, first)
		if err != nil || res.Accepted != len(first) {
			b.Fatalf("%+v %v", res, err)
		}
		for _, o := range res.Data {
			customers = append(customers, *o.Event.CustomerID)
		}
	}
	return m, customers
}

func BenchmarkIngest(b *testing.B) {
	u := startUsageBench(b)
	ctx := context.Background()
	m, customers := u.tokensMeter(b, 100)
	const clients = 4
	run := func(b *testing.B, send func(n int64) error) {
		var next atomic.Int64
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := next.Add(1)
					if n > int64(b.N) {
						return
					}
					if err := send(n); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)*500/time.Since(start).Seconds(), "events/s")
	}
	round := 0
	api := func(c *client.Client) func(b *testing.B) {
		return func(b *testing.B) {
			round++
			r := round
			run(b, func(n int64) error {
				res, err := c.SendMeterEvents(ctx, benchBatch(n+int64(r)*1e9, customers))
				if err == nil && res.Accepted != 500 {
					err = fmt.Errorf("accepted %d", res.Accepted)
				}
				return err
			})
		}
	}
	b.Run("api", api(u.c))
	// The same without gzip, which the compression middleware otherwise
	// applies to every batch result.
	b.Run("api-nogzip", api(client.New(u.url, u.key, client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}))))
	// The same rows, straight into the table.
	var sql strings.Builder
	sql.WriteString(`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp, properties, idempotency_key) VALUES `)
	for i := range 500 {
		if i > 0 {
			sql.WriteString(",")
		}
		p := i*6 + 4
		fmt.Fprintf(&sql, "($1, $2, $%d, $3, $%d, $%d, $%d, $%d::jsonb, $%d)", p, p+1, p+2, p+3, p+4, p+5)
	}
	sql.WriteString(" ON CONFLICT DO NOTHING")
	var keySQL strings.Builder
	keySQL.WriteString(`INSERT INTO meter_event_keys (merchant_id, mode, idempotency_key, event_id, event_timestamp) VALUES `)
	for i := range 500 {
		if i > 0 {
			keySQL.WriteString(",")
		}
		fmt.Fprintf(&keySQL, "($1, $2, $%d, $%d, $%d)", i*3+3, i*3+4, i*3+5)
	}
	keySQL.WriteString(" ON CONFLICT DO NOTHING")
	raw := func(keys bool) func(b *testing.B) {
		return func(b *testing.B) {
			round++
			r := round
			run(b, func(n int64) error {
				args := []any{u.s.MerchantID, u.s.Mode, m.ID}
				kargs := []any{u.s.MerchantID, u.s.Mode}
				now := time.Now().UTC().Format(time.RFC3339Nano)
				for i, e := range benchBatch(n+int64(r)*1e9, customers) {
					eid := id.New("me")
					args = append(args, eid, e.CustomerID, i%97, now, string(e.Properties), e.IdempotencyKey)
					kargs = append(kargs, e.IdempotencyKey, eid, now)
				}
				if keys {
					if _, err := u.db.Exec(keySQL.String(), kargs...); err != nil {
						return err
					}
				}
				_, err := u.db.Exec(sql.String(), args...)
				return err
			})
		}
	}
	// The events alone, as the baseline; and with their key rows,
	// which is what a keyed event costs the database at least.
	b.Run("raw", raw(false))
	b.Run("raw+keys", raw(true))
}

// TestEntitlementCheckLatency stores 1,000,000 events for one customer
// through the API, then checks a metered entitlement at a fixed 2,000
// checks/s and reports p50/p99. Opt-in: TOLLGATE_BENCH=1 (it takes minutes).
func TestEntitlementCheckLatency(t *testing.T) {
	if os.Getenv("TOLLGATE_BENCH") == "" {
		t.Skip("set TOLLGATE_BENCH=1 to run")
	}
	u := startUsageBench(t)
	ctx := context.Background()
	m, err := u.c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.c.CreateFeature(ctx, client.FeatureParams{Key: "ai", Name: "AI", Type: "metered", Meter: m.ID}); err != nil {
		t.Fatal(err)
	}
	g, err := u.c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "ai", ExternalCustomerID: "heavy", LimitValue: "1000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	total, batch := 1_000_000, 500
	if n, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_EVENTS")); err == nil && n > 0 {
		total = n // a quicker run
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(total/batch) {
					return
				}
				events := make([]client.MeterEventParams, batch)
				for i := range events {
					events[i] = client.MeterEventParams{EventName: "tokens", Value: "1", CustomerID: g.CustomerID, IdempotencyKey: fmt.Sprintf("h%d-%d", n, i)}
				}
				if _, err := u.c.SendMeterEvents(ctx, events); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("stored %d events for one customer in %s (%.0f events/s)", total, time.Since(start).Round(time.Second), float64(total)/time.Since(start).Seconds())
	if _, err := u.db.Exec(`VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
	e, err := u.c.CheckEntitlement(ctx, g.CustomerID, "ai")
	if err != nil || *e.Used != fmt.Sprint(total) {
		t.Fatalf("used %v %v", e, err)
	}
	// At most 128 connections (more would queue, and count as latency). The
	// response is not gzipped: with the compression middleware, a check
	// costs several times more (set TOLLGATE_BENCH_GZIP=1 to measure it).
	cc := client.New(u.url, u.key, client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{MaxConnsPerHost: 128, MaxIdleConnsPerHost: 128, DisableCompression: os.Getenv("TOLLGATE_BENCH_GZIP") == ""}}))
	// Closed loop first: the latency of one check at a time.
	seq := make([]time.Duration, 2000)
	for i := range seq {
		s := time.Now()
		if _, err := cc.CheckEntitlement(ctx, g.CustomerID, "ai"); err != nil {
			t.Fatal(err)
		}
		seq[i] = time.Since(s)
	}
	sort.Slice(seq, func(i, j int) bool { return seq[i] < seq[j] })
	t.Logf("one at a time: p50 %s, p99 %s", seq[len(seq)/2], seq[len(seq)*99/100])
	// Open loop: requests start on schedule whatever the latency.
	rates := []int{2000}
	if env := os.Getenv("TOLLGATE_BENCH_RATE"); env != "" {
		rates = nil // e.g. "2000,500": also the rate this machine sustains
		for _, f := range strings.Split(env, ",") {
			if r, err := strconv.Atoi(f); err == nil && r > 0 {
				rates = append(rates, r)
			}
		}
	}
	for _, rate := range rates {
		t.Logf("through HTTP (auth, middleware, client):")
		openLoop(t, rate, 15*time.Second, total, func() error {
			_, err := cc.CheckEntitlement(ctx, g.CustomerID, "ai")
			return err
		})
		// The domain call alone, on the daemon's pool: what the check
		// itself costs, whatever the HTTP stack adds.
		t.Logf("entitlements.Check on the pool:")
		openLoop(t, rate, 15*time.Second, total, func() error {
			_, err := entitlements.Check(ctx, u.db, u.s, g.CustomerID, "ai", time.Now())
			return err
		})
	}
}

// openLoop calls check at rate per second for dur, each call started on
// schedule whatever the latency of the others, and logs the latencies.
func openLoop(t *testing.T, rate int, dur time.Duration, events int, check func() error) {
	n := int(float64(rate) * dur.Seconds())
	lat := make([]time.Duration, n)
	var fails atomic.Int64
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			if err := check(); err != nil && fails.Add(1) == 1 {
				t.Logf("first error: %v", err)
			}
			lat[i] = time.Since(s)
		}()
	}
	wg.Wait()
	achieved := float64(n) / time.Since(t0).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("entitlement check at %d/s (achieved %.0f/s) for %s with %d events: p50 %s, p99 %s, max %s, errors %d",
		rate, achieved, dur, events, lat[n/2], lat[n*99/100], lat[n-1], fails.Load())
}

package daemon_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// Delivery benchmarks, against a local receiver on loopback. Run with e.g.
//
//	go test ./daemon/ -run '^$' -bench Delivery -benchtime 500x
//
// BenchmarkDeliveryLatency reports the time from an event's commit to its
// first delivery's arrival (p50, p99); BenchmarkDeliveryThroughput reports
// sustained deliveries per second while events are being emitted, with a
// receiver answering 200, and one answering 500 to 10% of attempts.

// benchSetup starts a listening daemon over a fresh database with one
// endpoint at the receiver and returns the database and scope.
func benchSetup(b *testing.B, rc *receiver) (*store.DB, tenant.Scope) {
	b.Helper()
	url := testdb.New(b)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	startDaemon(b, db, url, func(c *daemon.Config) {
		c.AllowInsecureWebhooks = true
		c.WebhookRetrySchedule = []time.Duration{10 * time.Millisecond}
	})
	ctx := context.Background()
	m, err := auth.CreateMerchant(ctx, db, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := webhooks.Add(ctx, db, webhooks.Input{MerchantID: m.ID, Mode: tenant.Test, URL: rc.URL, AllowInsecure: true}); err != nil {
		b.Fatal(err)
	}
	return db, tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
}

func BenchmarkDeliveryLatency(b *testing.B) {
	rc := newReceiver(b, nil)
	arrived := make(chan time.Time, 1)
	rc.Before = func(*http.Request) { arrived <- time.Now() }
	db, s := benchSetup(b, rc)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		emit(b, db, s, "invoice.paid", map[string]any{"n": i})
		committed := time.Now()
		select {
		case at := <-arrived:
			samples = append(samples, at.Sub(committed))
		case <-time.After(10 * time.Second):
			b.Fatal("delivery did not arrive")
		}
	}
	b.StopTimer()
	slices.Sort(samples)
	pct := func(p float64) float64 {
		return float64(samples[min(len(samples)-1, int(p*float64(len(samples))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkDeliveryThroughput(b *testing.B) {
	for _, failPct := range []uint32{0, 10} {
		b.Run(fmt.Sprintf("fail=%d%%", failPct), func(b *testing.B) {
			rc := newReceiver(b, nil)
			var ok, attempts atomic.Int64
			rc.Status = func(_ int, h hook) int {
				attempts.Add(1)
				f := fnv.New32a()
				f.Write([]byte(h.Header.Get("wc-delivery-id") + h.Header.Get("wc-delivery-attempt")))
				if f.Sum32()%100 < failPct {
					return 500
				}
				ok.Add(1)
				return 200
			}
			db, s := benchSetup(b, rc)
			const emitters, perTx = 4, 10
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range emitters {
				wg.Go(func() {
					for i := w * perTx; i < b.N; i += emitters * perTx {
						err := db.InTx(context.Background(), func(tx *store.Tx) error {
							for j := i; j < min(i+perTx, b.N); j++ {
								if _, err := events.Emit(context.Background(), tx, s, "invoice.paid", time.Now(), map[string]any{"n": j}); err != nil {
									return err
								}
							}
							return nil
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			emitted := time.Since(start)
			deadline := time.Now().Add(5 * time.Minute)
			for ok.Load() < int64(b.N) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d delivered", ok.Load(), b.N)
				}
				time.Sleep(time.Millisecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
			b.ReportMetric(float64(attempts.Load())/elapsed.Seconds(), "attempts/s")
			b.ReportMetric(float64(b.N)/emitted.Seconds(), "events/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

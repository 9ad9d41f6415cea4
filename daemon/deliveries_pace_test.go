package daemon_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Three endpoints of three merchants hang (they never answer), each with
// more deliveries due than the daemon has senders; a fourth merchant's
// endpoint answers at once. Every healthy delivery succeeds while the
// hanging requests are all still held (none has reached its timeout yet),
// and the hanging endpoints together never hold more than their share of
// the senders.
func TestDeliveryThreeHangingEndpointsOneHealthy(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	workers := daemon.Defaults().DeliveryWorkers

	release := make(chan struct{})
	var mu sync.Mutex
	held, most := map[string]int{}, map[string]int{}
	total, mostTotal := 0, 0
	var returned atomic.Int64 // hanging requests that ended (timed out)
	hang := func(name string) func(r *http.Request) {
		return func(r *http.Request) {
			mu.Lock()
			held[name]++
			total++
			most[name] = max(most[name], held[name])
			mostTotal = max(mostTotal, total)
			mu.Unlock()
			select {
			case <-release:
			case <-r.Context().Done():
				returned.Add(1)
			}
			mu.Lock()
			held[name]--
			total--
			mu.Unlock()
		}
	}
	for i := range 3 {
		name := fmt.Sprintf("hanging%d", i)
		rc := newReceiver(t, nil)
		rc.Before = hang(name)
		m := b.merchant(name)
		b.endpoint(m, rc.URL+"/hang")
		for j := range workers + 16 {
			emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{"n": j})
		}
	}
	// (after the receivers' cleanup is registered, so it runs before it)
	t.Cleanup(func() { close(release) })
	// The hanging endpoints are claimed first: their deliveries are due
	// before the healthy one's.
	eventually(t, 30*time.Second, "every hanging endpoint holding a request", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(most) == 3
	})

	healthy := newReceiver(t, nil)
	m := b.merchant("healthy")
	b.endpoint(m, healthy.URL+"/ok")
	const n = 100
	for j := range n {
		emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{"n": j})
	}
	eventually(t, 60*time.Second, "every healthy delivery answered, or a hanging request timed out", func() bool {
		return healthy.Count() >= n || returned.Load() > 0
	})
	if got := returned.Load(); got > 0 {
		t.Fatalf("only %d of %d healthy deliveries arrived before a hanging request timed out", healthy.Count(), n)
	}
	mu.Lock()
	defer mu.Unlock()
	for name, k := range most {
		if k > workers/4 {
			t.Errorf("%s held %d senders at once, more than a quarter of %d", name, k, workers)
		}
	}
	if mostTotal > workers/2 {
		t.Errorf("the hanging endpoints held %d senders at once, more than half of %d", mostTotal, workers)
	}
}

// A 503 with Retry-After: 1 is tried again after the second it asks for
// (within the schedule's bounds), not after the schedule's 20 ms step.
func TestDeliveryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	b := setupListening(t, func(c *daemon.Config) {
		c.AllowInsecureWebhooks = true
		c.WebhookRetrySchedule = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 5 * time.Second}
	})
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		at = append(at, time.Now())
		first := len(at) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	m := b.merchant("acme")
	b.endpoint(m, srv.URL+"/busy")
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(ds) != 1 || ds[0].Status != "succeeded" || len(at) != 2 {
		t.Fatalf("deliveries %+v after %d requests", ds, len(at))
	}
	if gap := at[1].Sub(at[0]); gap < time.Second {
		t.Errorf("retried %v after a 503 asking for 1 s", gap)
	}
}

package daemon_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// Webhook deliveries under faults, from outside: a dead endpoint costs only
// its own deliveries, and a daemon killed right after an endpoint answered
// keeps that answer.

// A hanging endpoint (it never answers) beside a healthy one that fails
// twice and then succeeds, and two that always fail (500, a dropped
// connection): the healthy one's deliveries finish on their retry
// schedule, not held up by the others' attempts.
func TestDeliveryHangingEndpointCostsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	const step = 300 * time.Millisecond
	b := setupListening(t, func(c *daemon.Config) {
		c.AllowInsecureWebhooks = true
		c.WebhookRetrySchedule = []time.Duration{step, step, step, step}
	})
	release := make(chan struct{})
	var held atomic.Int64
	hanging := newReceiver(t, nil)
	hanging.Before = func(r *http.Request) {
		held.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	t.Cleanup(func() { close(release) })
	healthy := newReceiver(t, nil)
	healthy.Status = func(_ int, h hook) int {
		if h.Attempt() < 3 {
			return 500
		}
		return 200
	}
	failing := newReceiver(t, nil)
	failing.Status = func(int, hook) int { return 500 }
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	t.Cleanup(dropping.Close)
	m := b.merchant("acme")
	b.endpoint(m, hanging.URL+"/hang")
	b.endpoint(m, healthy.URL+"/ok")
	b.endpoint(m, failing.URL+"/fail")
	b.endpoint(m, dropping.URL+"/drop")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}

	// More deliveries per endpoint than the daemon has workers: were the
	// hanging endpoint not held to its share, it would take them all.
	n := daemon.Defaults().DeliveryWorkers + 16
	emitted := map[string]time.Time{}
	for i := range n {
		ev := emit(t, b.db, s, "invoice.paid", map[string]any{"n": i})
		emitted[ev.ID] = time.Now()
	}
	// Each healthy delivery succeeds at its third attempt, two steps after
	// its first: allow the schedule plus a few seconds on a loaded machine
	// (CI runs packages side by side on two cores), still half the hanging
	// endpoint's 10 s timeout, which workers held by it would add.
	const slack = 5 * time.Second
	eventually(t, 2*step+slack+time.Second, "every healthy delivery succeeded", func() bool {
		ok := map[string]bool{}
		for _, h := range healthy.Got() {
			if h.Attempt() == 3 {
				ok[h.Header.Get("wc-event-id")] = true
			}
		}
		return len(ok) == n
	})
	byDelivery := map[string][]hook{}
	for _, h := range healthy.Got() {
		id := h.Header.Get("wc-delivery-id")
		byDelivery[id] = append(byDelivery[id], h)
	}
	if len(byDelivery) != n {
		t.Fatalf("%d healthy deliveries, want %d", len(byDelivery), n)
	}
	for id, hs := range byDelivery {
		if len(hs) != 3 {
			t.Errorf("%s: %d requests, want 3", id, len(hs))
			continue
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].Attempt() < hs[j].Attempt() })
		start := emitted[hs[0].Header.Get("wc-event-id")]
		for k, h := range hs {
			if h.Attempt() != k+1 {
				t.Errorf("%s: attempts %d, %d, %d", id, hs[0].Attempt(), hs[1].Attempt(), hs[2].Attempt())
				break
			}
			due := start.Add(time.Duration(k) * step)
			if late := h.At.Sub(due); late > slack {
				t.Errorf("%s: attempt %d came %v after it was due", id, k+1, late)
			}
			if k > 0 {
				if gap := h.At.Sub(hs[k-1].At); gap < step-50*time.Millisecond {
					t.Errorf("%s: attempt %d only %v after the previous one", id, k+1, gap)
				}
			}
		}
	}
	// The hanging endpoint holds no more than its share meanwhile.
	if got := held.Load(); got == 0 || got > int64(daemon.Defaults().DeliveriesPerEndpoint) {
		t.Errorf("the hanging endpoint got %d requests at once, want 1 to %d", got, daemon.Defaults().DeliveriesPerEndpoint)
	}
}

// kill -9 of `tollgate serve` 0.2 s after an endpoint answered 200: that
// delivery is never POSTed again. Nothing gets more than 5 attempts, no
// attempt number is sent twice, and every delivery ends succeeded (the
// healthy endpoint) or failed after 5 attempts (the failing one).
func TestDeliveryKill9AfterAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tollgate binary")
	}
	t.Parallel()
	url := testdb.New(t)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &bundle{t: t, db: db}

	// ok answers its first okFirst requests with 200, then holds every
	// request until the daemon dies, and once it is restarted answers 200.
	const okFirst = 10
	var mu sync.Mutex
	answered := map[string]time.Time{} // delivery id → when its 200 was written
	lastAnswer := make(chan time.Time, okFirst)
	restarted := make(chan struct{})
	ok := newReceiver(t, nil)
	ok.Before = func(r *http.Request) {
		select {
		case <-restarted:
			return
		default:
		}
		mu.Lock()
		if len(answered) >= okFirst {
			mu.Unlock()
			<-r.Context().Done()
			return
		}
		answered[r.Header.Get("wc-delivery-id")] = time.Time{}
		mu.Unlock()
	}
	ok.Status = func(_ int, h hook) int {
		mu.Lock()
		defer mu.Unlock()
		if at, mine := answered[h.Header.Get("wc-delivery-id")]; mine && at.IsZero() {
			now := time.Now()
			answered[h.Header.Get("wc-delivery-id")] = now
			lastAnswer <- now
		}
		return 200
	}
	failing := newReceiver(t, nil)
	failing.Status = func(int, hook) int { return 500 }

	m := b.merchant("acme")
	b.endpoint(m, ok.URL+"/ok")
	b.endpoint(m, failing.URL+"/fail")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}

	bin := tollgateBinary(t)
	args := []string{"--allow-insecure-webhooks", "--webhook-retry-schedule", "150ms,150ms,150ms,150ms"}
	p := serveProcess(t, bin, url, args...)
	const n = 20
	evs := make([]events.Event, n)
	for i := range n {
		evs[i] = emit(t, db, s, "invoice.paid", map[string]any{"n": i})
	}
	var last time.Time
	for range okFirst {
		select {
		case last = <-lastAnswer:
		case <-time.After(30 * time.Second):
			t.Fatal("the endpoint was not called")
		}
	}
	time.Sleep(time.Until(last.Add(200 * time.Millisecond)))
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	killedAt := time.Now()
	close(restarted)
	serveProcess(t, bin, url, args...)

	for _, ev := range evs {
		settled(t, db, ev.ID, 60*time.Second)
	}
	okReq := requestsByDelivery(ok.Got())
	mu.Lock()
	resent := 0
	for id, at := range answered {
		if !at.IsZero() && len(okReq[id]) > 1 {
			resent++
		}
		if !at.IsZero() && at.Before(killedAt.Add(-200*time.Millisecond)) && len(okReq[id]) != 1 {
			t.Errorf("delivery %s answered 200 at -%v was POSTed %d times (attempts %v)", id, killedAt.Sub(at), len(okReq[id]), okReq[id])
		}
	}
	t.Logf("of %d deliveries answered 200 before the kill, %d were POSTed again", len(answered), resent)
	mu.Unlock()
	for name, rc := range map[string]*receiver{"ok": ok, "failing": failing} {
		for id, attempts := range requestsByDelivery(rc.Got()) {
			seen := map[int]bool{}
			for _, a := range attempts {
				if a < 1 || a > 5 || seen[a] {
					t.Errorf("%s: delivery %s sent attempts %v", name, id, attempts)
					break
				}
				seen[a] = true
			}
		}
	}
	for _, ev := range evs {
		for _, d := range deliveriesOf(t, db, ev.ID) {
			as := attemptsOf(t, db, d.ID)
			switch {
			case d.Attempts > 5 || len(as) > 5:
				t.Errorf("delivery %s: %d attempts, %d on record", d.ID, d.Attempts, len(as))
			case d.Status == webhooks.StatusFailed && (d.Attempts != 5 || len(as) != 5):
				t.Errorf("failed delivery %s: %d attempts, %d on record", d.ID, d.Attempts, len(as))
			case d.Status == webhooks.StatusSucceeded && (len(as) != d.Attempts || as[len(as)-1].Status == nil || *as[len(as)-1].Status != 200):
				t.Errorf("succeeded delivery %s: %d attempts, %+v on record", d.ID, d.Attempts, as)
			}
		}
	}
}

// requestsByDelivery lists the attempt numbers each delivery was sent with.
func requestsByDelivery(hooks []hook) map[string][]int {
	out := map[string][]int{}
	for _, h := range hooks {
		id := h.Header.Get("wc-delivery-id")
		out[id] = append(out[id], h.Attempt())
	}
	return out
}

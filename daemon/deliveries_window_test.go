package daemon_test

import (
	"context"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// The window in which a 2xx is lost: kill -9 of `tollgate serve` while
// deliveries stream to a healthy endpoint, at once after its 150th 200.
// An answer the daemon had not yet put on record is POSTed again after
// the restart (at least once allows it); the test reports how many were,
// and how long before the kill the oldest of them was answered, the
// window between an endpoint's answer and its record. It asserts only
// what delivery promises: every delivery succeeds, no attempt number is
// sent twice.
func TestDeliveryKill9ResentWindow(t *testing.T) {
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

	const target, n = 150, 400
	var mu sync.Mutex
	answered := map[string]time.Time{} // delivery id → when its first 200 was written
	reached := make(chan struct{})
	ok := newReceiver(t, nil)
	ok.Status = func(_ int, h hook) int {
		mu.Lock()
		defer mu.Unlock()
		id := h.Header.Get("wc-delivery-id")
		if _, seen := answered[id]; !seen {
			answered[id] = time.Now()
			if len(answered) == target {
				close(reached)
			}
		}
		return 200
	}
	m := b.merchant("acme")
	b.endpoint(m, ok.URL+"/ok")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	bin := tollgateBinary(t)
	args := []string{"--allow-insecure-webhooks", "--webhook-retry-schedule", "150ms,150ms,150ms,150ms"}
	p := serveProcess(t, bin, url, args...)
	evs := make([]events.Event, 0, n)
	emitted := make(chan struct{})
	go func() {
		defer close(emitted)
		for i := range n {
			evs = append(evs, emit(t, db, s, "invoice.paid", map[string]any{"n": i}))
		}
	}()
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatal("the endpoint was not called")
	}
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	_ = p.Wait()
	<-emitted
	serveProcess(t, bin, url, args...)
	for _, ev := range evs {
		settled(t, db, ev.ID, 60*time.Second)
	}

	byDelivery := requestsByDelivery(ok.Got())
	mu.Lock()
	defer mu.Unlock()
	var before int
	var resent []time.Duration
	for id, at := range answered {
		if at.After(killedAt) {
			continue
		}
		before++
		if len(byDelivery[id]) > 1 {
			resent = append(resent, killedAt.Sub(at))
		}
	}
	sort.Slice(resent, func(i, j int) bool { return resent[i] > resent[j] })
	window := time.Duration(0)
	if len(resent) > 0 {
		window = resent[0]
	}
	t.Logf("2xx answered before the kill: %d; POSTed again after the restart: %d; oldest of them answered %v before the kill",
		before, len(resent), window.Round(time.Millisecond))
	for id, attempts := range byDelivery {
		seen := map[int]bool{}
		for _, a := range attempts {
			if seen[a] {
				t.Errorf("delivery %s sent attempts %v", id, attempts)
				break
			}
			seen[a] = true
		}
	}
	for _, ev := range evs {
		for _, d := range deliveriesOf(t, db, ev.ID) {
			if d.Status != "succeeded" {
				t.Errorf("delivery %s: %s after %d attempts", d.ID, d.Status, d.Attempts)
			}
		}
	}
}

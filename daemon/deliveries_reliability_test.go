package daemon_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// tollgateBinary builds cmd/tollgate into a directory of the test.
func tollgateBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tollgate")
	if out, err := exec.Command("go", "build", "-o", path, "../cmd/tollgate").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return path
}

// serveProcess runs `tollgate serve` on url and returns it once it serves.
func serveProcess(t *testing.T, bin, url string, args ...string) *exec.Cmd {
	t.Helper()
	c, _ := serveProcessURL(t, bin, url, args...)
	return c
}

// serveProcessURL is serveProcess that also returns the daemon's URL.
func serveProcessURL(t *testing.T, bin, url string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, append([]string{"serve", "--database-url", url, "--listen", "127.0.0.1:0", "--config", cfg}, args...)...)
	c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "tollgate serving") {
				_, rest, _ := strings.Cut(line, "url=")
				addr, _, _ := strings.Cut(rest, " ")
				once.Do(func() { serving <- addr })
			}
		}
	}()
	select {
	case addr := <-serving:
		return c, addr
	case <-time.After(60 * time.Second):
		t.Fatal("tollgate serve did not start")
	}
	return c, ""
}

// A daemon killed with SIGKILL in the middle of a delivery loses nothing:
// its attempt was numbered (never to be reused) but not answered, and once
// its lease runs out the next daemon records it as interrupted and makes the
// next attempt.
func TestDeliverySurvivesKill9(t *testing.T) {
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
	inFlight := make(chan struct{}, 1)
	var first atomic.Bool
	first.Store(true)
	rc := newReceiver(t, nil)
	rc.Before = func(r *http.Request) {
		if first.CompareAndSwap(true, false) {
			inFlight <- struct{}{}
			<-r.Context().Done() // hold the request until the daemon dies
		}
	}
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)

	bin := tollgateBinary(t)
	p := serveProcess(t, bin, url, "--allow-insecure-webhooks", "--webhook-retry-schedule", "50ms")
	ev := emit(t, db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery never started")
	}
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	if d := deliveriesOf(t, db, ev.ID)[0]; d.Status != webhooks.StatusPending || d.Attempts != 1 {
		t.Fatalf("after kill -9: %+v", d)
	}
	serveProcess(t, bin, url, "--allow-insecure-webhooks", "--webhook-retry-schedule", "50ms")
	d := settled(t, db, ev.ID, 45*time.Second)[0]
	hooks := rc.Got()
	if d.Status != webhooks.StatusSucceeded || d.Attempts != 2 || len(hooks) != 2 {
		t.Fatalf("after restart: %+v, %d requests", d, len(hooks))
	}
	for i, h := range hooks {
		if h.Attempt() != i+1 || h.Header.Get("wc-delivery-id") != d.ID {
			t.Errorf("request %d for %s has attempt %d", i, h.Header.Get("wc-delivery-id"), h.Attempt())
		}
	}
	as := attemptsOf(t, db, d.ID)
	if len(as) != 2 || as[0].Error == nil || !strings.Contains(*as[0].Error, "stopped") || as[1].Status == nil || *as[1].Status != 200 {
		t.Fatalf("attempts on record: %+v", as)
	}
}

// Two daemons on one database share the work and never send the same
// attempt twice.
func TestDeliveryTwoDaemonsOneDatabase(t *testing.T) {
	t.Parallel()
	url := testdb.New(t)
	var dbs []*store.DB
	for range 2 {
		db, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
		startDaemon(t, db, url, insecure)
	}
	b := &bundle{t: t, db: dbs[0]}
	var mu sync.Mutex
	sent := map[string]int{} // delivery id + attempt → requests
	rc := newReceiver(t, nil)
	rc.Status = func(_ int, h hook) int {
		mu.Lock()
		sent[h.Header.Get("wc-delivery-id")+"#"+h.Header.Get("wc-delivery-attempt")]++
		mu.Unlock()
		if h.Attempt() == 1 {
			return 500 // every delivery is retried once
		}
		return 200
	}
	m := b.merchant("acme")
	b.endpoint(m, rc.URL+"/a")
	b.endpoint(m, rc.URL+"/b")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	const n = 100
	var wg sync.WaitGroup
	evs := make([]events.Event, n)
	for i := range n {
		wg.Go(func() { evs[i] = emit(t, dbs[i%2], s, "invoice.paid", map[string]any{"n": i}) })
	}
	wg.Wait()
	for _, ev := range evs {
		for _, d := range settled(t, dbs[0], ev.ID, 30*time.Second) {
			if d.Status != webhooks.StatusSucceeded || d.Attempts != 2 {
				t.Fatalf("delivery %+v", d)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2*n*2 {
		t.Errorf("%d distinct attempts, want %d", len(sent), 2*n*2)
	}
	for k, c := range sent {
		if c != 1 {
			t.Errorf("%s sent %d times", k, c)
		}
	}
}

// PostgreSQL restarted while events are being emitted: the workers and the
// LISTEN connection recover by themselves and every committed event is
// delivered.
func TestDeliveryPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own PostgreSQL cluster")
	}
	t.Parallel()
	ctx := context.Background()
	cl, url, db := privateCluster(t)
	startDaemon(t, db, url, insecure)
	b := &bundle{t: t, db: db}
	rc := newReceiver(t, nil)
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}

	var committed sync.Map
	var count atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var ev events.Event
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ev, err = events.Emit(ctx, tx, s, "invoice.paid", time.Now(), map[string]any{"n": i})
				return err
			})
			if err != nil {
				time.Sleep(20 * time.Millisecond) // the database is down
				continue
			}
			committed.Store(ev.ID, true)
			count.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	eventually(t, 20*time.Second, "events before the restart", func() bool { return count.Load() >= 30 })
	if err := cl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	before := count.Load()
	eventually(t, 30*time.Second, "events after the restart", func() bool { return count.Load() >= before+30 })
	close(stop)
	<-done
	received := func() map[string]bool {
		got := map[string]bool{}
		for _, h := range rc.Got() {
			got[h.Header.Get("wc-event-id")] = true
		}
		return got
	}
	eventually(t, 30*time.Second, "every committed event delivered", func() bool {
		got, all := received(), true
		committed.Range(func(k, _ any) bool { all = got[k.(string)]; return all })
		return all
	})
	var pending int
	eventually(t, 30*time.Second, "no delivery left pending", func() bool {
		_ = db.Get(&pending, `SELECT count(*) FROM webhook_deliveries WHERE status <> 'succeeded'`)
		return pending == 0
	})
}

// A wake-up that never arrives (a NOTIFY lost with its connection, a
// replica that died between commit and notify) loses no delivery: the
// delivery job's poll finds the row. The event and its delivery are
// written here with plain SQL, outside store.Tx, so nothing wakes anyone.
func TestDeliveryLostWakeUpIsFoundByThePoll(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	m := b.merchant("acme")
	ep := b.endpoint(m, rc.URL+"/hooks")
	ctx := context.Background()
	const evID, dlvID = "evt_lostwakeup", "dlv_lostwakeup"
	tx, err := b.db.DB.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (merchant_id, mode, id, type, data, occurred_at)
		VALUES ($1, 'test', $2, 'invoice.paid', '{"id":"inv_1"}', now())`, m, evID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id)
		VALUES ($1, 'test', $2, $3, $4)`, m, dlvID, evID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The poll runs every few seconds; well past it, the delivery is done.
	ds := settled(t, b.db, evID, 30*time.Second)
	if len(ds) != 1 || ds[0].ID != dlvID || ds[0].Status != webhooks.StatusSucceeded {
		t.Fatalf("deliveries %+v", ds)
	}
	if hooks := rc.Got(); len(hooks) != 1 || hooks[0].Header.Get("wc-event-id") != evID {
		t.Fatalf("%d requests", len(hooks))
	}
}

package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

// The operator's event and delivery commands against a real daemon.

// eventsDB opens a fresh database and returns it with its URL.
func eventsDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	url := testdb.New(t)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

// insecure lets a daemon deliver to loopback receivers, retrying fast.
func insecure(c *daemon.Config) {
	c.AllowInsecureWebhooks = true
	c.WebhookRetrySchedule = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}
}

// startEventsDaemon starts a daemon over db on :0, stopped in t.Cleanup.
func startEventsDaemon(t *testing.T, db *store.DB, opts ...func(*daemon.Config)) *daemon.Daemon {
	t.Helper()
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Shutdown(ctx)
	})
	return d
}

// merchantKey makes a merchant with a test key.
func merchantKey(t *testing.T, db *store.DB) (merchantID, key string) {
	t.Helper()
	m, err := auth.CreateMerchant(context.Background(), db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err = auth.CreateKey(context.Background(), db, m.ID, tenant.Test)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID, key
}

// cli runs the tollgate command line in-process with an empty config file.
func cli(t *testing.T, ctx context.Context, out, errOut *syncBuffer, args ...string) int {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return Run(ctx, append(args, "--config", cfg), &IO{In: strings.NewReader(""), Out: out, Err: errOut})
}

// `events tail` prints every event once, in order, across a restart of the
// daemon, including events emitted while it was down.
func TestEventsTailAcrossRestart(t *testing.T) {
	t.Parallel()
	db, _ := eventsDB(t)
	d1 := startEventsDaemon(t, db)
	m, key := merchantKey(t, db)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	want := []string{webhookstest.Emit(t, db, s, "invoice.paid", map[string]any{}).ID}

	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli(t, ctx, out, errOut, "events", "tail", "--since", "1h", "--json", "--interval", "20ms", "--api-url", d1.URL, "--api-key", key)
	}()
	printed := func() []string {
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var e struct{ ID string }
			if json.Unmarshal([]byte(line), &e) == nil {
				ids = append(ids, e.ID)
			}
		}
		return ids
	}
	waitPrinted := func(n int) {
		webhookstest.Eventually(t, 20*time.Second, fmt.Sprintf("%d events printed (stderr %q)", n, errOut.String()), func() bool { return len(printed()) >= n })
	}
	waitPrinted(1)
	want = append(want, webhookstest.Emit(t, db, s, "credit.granted", map[string]any{}).ID)
	waitPrinted(2)

	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := d1.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	want = append(want, webhookstest.Emit(t, db, s, "credit.granted", map[string]any{}).ID, webhookstest.Emit(t, db, s, "credit.debited", map[string]any{}).ID)
	time.Sleep(100 * time.Millisecond) // let tail notice the daemon is gone
	startEventsDaemon(t, db, func(c *daemon.Config) { c.Listen = strings.TrimPrefix(d1.URL, "http://") })
	want = append(want, webhookstest.Emit(t, db, s, "invoice.paid", map[string]any{}).ID)
	waitPrinted(len(want))
	time.Sleep(100 * time.Millisecond) // a duplicate would show up now
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail exited %d: %s", code, errOut.String())
	}
	if got := printed(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("printed %v, want %v", got, want)
	}
}

// --forward-to posts each event signed exactly as the daemon signs a
// delivery: the same bytes, verifiable with the secret.
func TestEventsTailForwardTo(t *testing.T) {
	t.Parallel()
	db, _ := eventsDB(t)
	d := startEventsDaemon(t, db, insecure)
	delivered := webhookstest.NewReceiver(t, nil)
	forwarded := webhookstest.NewReceiver(t, nil)
	m, key := merchantKey(t, db)
	webhookstest.Endpoint(t, db, m, delivered.URL)
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli(t, ctx, out, errOut, "events", "tail", "--interval", "20ms", "--types", "invoice.*",
			"--forward-to", forwarded.URL+"/hooks", "--secret", "whsec_local", "--api-url", d.URL, "--api-key", key)
	}()
	// tail starts after the newest event; wait for it to be following.
	time.Sleep(300 * time.Millisecond)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	webhookstest.Emit(t, db, s, "credit.granted", map[string]any{"skipped": true})
	ev := webhookstest.Emit(t, db, s, "invoice.paid", map[string]any{"id": "inv_1", "note": "<&>"})
	webhookstest.Eventually(t, 20*time.Second, "forwarded", func() bool { return forwarded.Count() == 1 && delivered.Count() == 2 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail exited %d: %s", code, errOut.String())
	}
	if want := fmt.Sprintf("[200] POST %s/hooks %s invoice.paid\n", forwarded.URL, ev.ID); out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	f := forwarded.Got()[0]
	if err := webhook.Verify(f.Body, f.Header.Get("x-wc-signature"), "whsec_local", 0); err != nil {
		t.Errorf("forwarded signature: %v", err)
	}
	var daemonBody []byte
	for _, h := range delivered.Got() {
		if h.Header.Get("wc-event-id") == ev.ID {
			daemonBody = h.Body
		}
	}
	if !bytes.Equal(f.Body, daemonBody) || f.Header.Get("wc-event-type") != "invoice.paid" {
		t.Errorf("forwarded body\n%s\ndiffers from the delivery\n%s", f.Body, daemonBody)
	}
}

// The operator's tools: list and show deliveries, replay them, rotate a
// secret.
func TestAdminDeliveriesCommands(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	startEventsDaemon(t, db, insecure)
	rc := webhookstest.NewReceiver(t, nil)
	var mu sync.Mutex
	status := 500
	rc.Status = func(int, webhookstest.Hook) int { mu.Lock(); defer mu.Unlock(); return status }
	m, _ := merchantKey(t, db)
	ep := webhookstest.Endpoint(t, db, m, rc.URL)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	ev := webhookstest.Emit(t, db, s, "invoice.paid", map[string]any{})
	d := webhookstest.Settled(t, db, ev.ID, 10*time.Second)[0]
	ctx := context.Background()
	run := func(args ...string) (int, string, string) {
		out, errOut := &syncBuffer{}, &syncBuffer{}
		code := cli(t, ctx, out, errOut, append(append([]string{"admin"}, args...), "--database-url", url)...)
		return code, out.String(), errOut.String()
	}

	code, out, stderr := run("deliveries", "list", "--status", "failed", "--json")
	var listed []webhooks.Delivery
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 || len(listed) != 1 || listed[0].ID != d.ID || listed[0].Attempts != 5 {
		t.Fatalf("list --json: exit %d %s %s", code, out, stderr)
	}
	if code, out, _ = run("deliveries", "list", "--event", ev.ID); code != 0 || !strings.Contains(out, d.ID) || !strings.Contains(out, "failed") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, out, _ = run("deliveries", "show", d.ID); code != 0 || !strings.Contains(out, "#5") || !strings.Contains(out, "status 500") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	if code, _, _ = run("deliveries", "list", "--status", "lost"); code != ExitUsage {
		t.Errorf("list --status lost: exit %d", code)
	}
	for _, args := range [][]string{{"deliveries", "retry"}, {"deliveries", "retry", d.ID, "--event", ev.ID}} {
		if code, _, _ = run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want usage", args, code)
		}
	}

	mu.Lock()
	status = 200
	mu.Unlock()
	if code, out, stderr = run("deliveries", "retry", d.ID); code != 0 || !strings.Contains(out, "Retrying 1 delivery") {
		t.Fatalf("retry: exit %d %s %s", code, out, stderr)
	}
	webhookstest.Eventually(t, 10*time.Second, "replayed delivery succeeds", func() bool {
		return webhookstest.Deliveries(t, db, ev.ID)[0].Status == webhooks.StatusSucceeded
	})
	if code, out, _ = run("deliveries", "retry", "--failed-since", "1h", "--json"); code != 0 || strings.TrimSpace(out) != `{
  "retried": []
}` {
		t.Errorf("retry --failed-since with nothing failed: exit %d %q", code, out)
	}
	assertAudited(t, db, m, audit.DeliveryRetry)
	assertAudited(t, db, "", audit.DeliveryRetry, audit.DeliveryRetry)

	code, out, stderr = run("webhook", "rotate-secret", ep.ID, "--overlap", "1h", "--json")
	var rotated struct{ Secret string }
	if err := json.Unmarshal([]byte(out), &rotated); err != nil || code != 0 || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Fatalf("rotate-secret: exit %d %s %s", code, out, stderr)
	}
	ev2 := webhookstest.Emit(t, db, s, "invoice.paid", map[string]any{})
	webhookstest.Settled(t, db, ev2.ID, 10*time.Second)
	last := rc.Got()[rc.Count()-1]
	for _, secret := range []string{ep.Secret, rotated.Secret} {
		if err := webhook.Verify(last.Body, last.Header.Get("x-wc-signature"), secret, 0); err != nil {
			t.Errorf("after rotate-secret: %v", err)
		}
	}
	if code, _, _ = run("webhook", "rotate-secret", "we_nope"); code == 0 {
		t.Error("rotate-secret of an unknown endpoint succeeded")
	}
}

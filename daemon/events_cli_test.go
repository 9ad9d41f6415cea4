package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/cmd"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cli runs the tollgate command line in-process with an empty config file.
func cli(t *testing.T, ctx context.Context, out, errOut *syncBuffer, args ...string) int {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return cmd.Run(ctx, append(args, "--config", cfg), &cmd.IO{In: strings.NewReader(""), Out: out, Err: errOut})
}

func TestEventsAfter(t *testing.T) {
	t.Parallel()
	b := setupListening(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	var ids []string
	for i := range 5 {
		ids = append(ids, emit(t, b.db, s, "credit.granted", map[string]any{"n": i}).ID)
	}
	c := b.client(key)
	ctx := context.Background()
	var got []string
	after := ids[0]
	for range 3 {
		page, err := c.ListEventsAfter(ctx, clientAfter(after, 2))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			got = append(got, e.ID)
		}
		if !page.HasMore {
			break
		}
		after = page.NextCursor
	}
	if strings.Join(got, ",") != strings.Join(ids[1:], ",") {
		t.Fatalf("after %s: %v, want %v oldest first", ids[0], got, ids[1:])
	}
	// A date-time means at or after that instant.
	page, err := c.ListEventsAfter(ctx, clientAfter("2000-01-01T00:00:00Z", 100))
	if err != nil || len(page.Data) != 5 || page.Data[0].ID != ids[0] {
		t.Fatalf("after 2000: %v %v", page, err)
	}
	for q, field := range map[string]string{
		"after=evt_nope": "after", "after=yesterday": "after", "after=" + ids[0] + "&before=2030-01-01T00:00:00Z": "after",
		"after=" + ids[0] + "&limit=101": "limit",
	} {
		status, _, body := b.raw("GET", "/v1/events?"+q, key, "")
		if status != 400 || !strings.Contains(body, `"invalid_request"`) || !strings.Contains(body, field) {
			t.Errorf("%s: %d %s", q, status, body)
		}
	}
	// Another merchant's event id is unknown here.
	other := b.merchant("other")
	_, otherKey := b.key(other, tenant.Test)
	if status, _, _ := b.raw("GET", "/v1/events?after="+ids[0], otherKey, ""); status != 400 {
		t.Errorf("another merchant's event as after: %d", status)
	}
}

// `events tail` prints every event once, in order, across a restart of the
// daemon, including events emitted while it was down.
func TestEventsTailAcrossRestart(t *testing.T) {
	t.Parallel()
	url := testdb.New(t)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d1 := startDaemon(t, db, url)
	b := &bundle{t: t, db: db, d: d1, url: d1.URL}
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	want := []string{emit(t, db, s, "invoice.paid", map[string]any{}).ID}

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
		eventually(t, 20*time.Second, fmt.Sprintf("%d events printed (stderr %q)", n, errOut.String()), func() bool { return len(printed()) >= n })
	}
	waitPrinted(1)
	want = append(want, emit(t, db, s, "credit.granted", map[string]any{}).ID)
	waitPrinted(2)

	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := d1.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	want = append(want, emit(t, db, s, "credit.granted", map[string]any{}).ID, emit(t, db, s, "credit.debited", map[string]any{}).ID)
	time.Sleep(100 * time.Millisecond) // let tail notice the daemon is gone
	startDaemon(t, db, url, func(c *daemon.Config) { c.Listen = strings.TrimPrefix(d1.URL, "http://") })
	want = append(want, emit(t, db, s, "invoice.paid", map[string]any{}).ID)
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
	b := setupListening(t, insecure)
	delivered := newReceiver(t, nil)
	forwarded := newReceiver(t, nil)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	b.endpoint(m, delivered.URL)
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli(t, ctx, out, errOut, "events", "tail", "--interval", "20ms", "--types", "invoice.*",
			"--forward-to", forwarded.URL+"/hooks", "--secret", "whsec_local", "--api-url", b.url, "--api-key", key)
	}()
	// tail starts after the newest event; wait for it to be following.
	time.Sleep(300 * time.Millisecond)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	emit(t, b.db, s, "credit.granted", map[string]any{"skipped": true})
	ev := emit(t, b.db, s, "invoice.paid", map[string]any{"id": "inv_1", "note": "<&>"})
	eventually(t, 20*time.Second, "forwarded", func() bool { return forwarded.count() == 1 && delivered.count() == 2 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail exited %d: %s", code, errOut.String())
	}
	if want := fmt.Sprintf("[200] POST %s/hooks %s invoice.paid\n", forwarded.URL, ev.ID); out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	f := forwarded.got()[0]
	if err := webhook.Verify(f.body, f.header.Get("x-wc-signature"), "whsec_local", 0); err != nil {
		t.Errorf("forwarded signature: %v", err)
	}
	var daemonBody []byte
	for _, h := range delivered.got() {
		if h.header.Get("wc-event-id") == ev.ID {
			daemonBody = h.body
		}
	}
	if !bytes.Equal(f.body, daemonBody) || f.header.Get("wc-event-type") != "invoice.paid" {
		t.Errorf("forwarded body\n%s\ndiffers from the delivery\n%s", f.body, daemonBody)
	}
}

// The operator's tools: list and show deliveries, replay them, rotate a
// secret.
func TestAdminDeliveriesCommands(t *testing.T) {
	t.Parallel()
	b, url := setupListeningURL(t, insecure)
	rc := newReceiver(t, nil)
	var mu sync.Mutex
	status := 500
	rc.status = func(int, hook) int { mu.Lock(); defer mu.Unlock(); return status }
	m := b.merchant("acme")
	ep := b.endpoint(m, rc.URL)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	ev := emit(t, b.db, s, "invoice.paid", map[string]any{})
	d := settled(t, b.db, ev.ID, 10*time.Second)[0]
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
	if code, _, _ = run("deliveries", "list", "--status", "lost"); code != cmd.ExitUsage {
		t.Errorf("list --status lost: exit %d", code)
	}
	for _, args := range [][]string{{"deliveries", "retry"}, {"deliveries", "retry", d.ID, "--event", ev.ID}} {
		if code, _, _ = run(args...); code != cmd.ExitUsage {
			t.Errorf("%v: exit %d, want usage", args, code)
		}
	}

	mu.Lock()
	status = 200
	mu.Unlock()
	if code, out, stderr = run("deliveries", "retry", d.ID); code != 0 || !strings.Contains(out, "Retrying 1 delivery") {
		t.Fatalf("retry: exit %d %s %s", code, out, stderr)
	}
	eventually(t, 10*time.Second, "replayed delivery succeeds", func() bool {
		return deliveriesOf(t, b.db, ev.ID)[0].Status == webhooks.StatusSucceeded
	})
	if code, out, _ = run("deliveries", "retry", "--failed-since", "1h", "--json"); code != 0 || strings.TrimSpace(out) != `{
  "retried": []
}` {
		t.Errorf("retry --failed-since with nothing failed: exit %d %q", code, out)
	}

	code, out, stderr = run("webhook", "rotate-secret", ep.ID, "--overlap", "1h", "--json")
	var rotated struct{ Secret string }
	if err := json.Unmarshal([]byte(out), &rotated); err != nil || code != 0 || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Fatalf("rotate-secret: exit %d %s %s", code, out, stderr)
	}
	ev2 := emit(t, b.db, s, "invoice.paid", map[string]any{})
	settled(t, b.db, ev2.ID, 10*time.Second)
	last := rc.got()[rc.count()-1]
	for _, secret := range []string{ep.Secret, rotated.Secret} {
		if err := webhook.Verify(last.body, last.header.Get("x-wc-signature"), secret, 0); err != nil {
			t.Errorf("after rotate-secret: %v", err)
		}
	}
	if code, _, _ = run("webhook", "rotate-secret", "we_nope"); code == 0 {
		t.Error("rotate-secret of an unknown endpoint succeeded")
	}
}

// clientAfter builds the parameters of ListEventsAfter.
func clientAfter(after string, limit int) client.EventsAfterParams {
	return client.EventsAfterParams{After: after, Limit: limit}
}

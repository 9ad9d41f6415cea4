package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

// An http:// endpoint admitted by `admin webhook add --allow-insecure-webhooks`
// is delivered only by a daemon started with the same flag. Add says so at
// once, and when the daemon lacks it, `admin webhook list` shows the
// deliveries pending and the daemon's refusal.
func TestAdminWebhookInsecureBacklog(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	startEventsDaemon(t, db) // without --allow-insecure-webhooks
	m, _ := merchantKey(t, db)
	run := func(args ...string) cliResult {
		return cliRun(t, nil, append(append([]string{"admin"}, args...), "--database-url", url)...)
	}
	res := run("webhook", "add", "--merchant", m, "--mode", "test", "--url", "http://127.0.0.1:9/hook", "--allow-insecure-webhooks", "--json")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "{") ||
		!strings.Contains(res.stderr, "only a daemon started with --allow-insecure-webhooks") || !strings.Contains(res.stderr, "stay pending") {
		t.Fatalf("add: exit %d\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	// (subscribed to another event type, so nothing is sent off this machine)
	if res := run("webhook", "add", "--merchant", m, "--mode", "test", "--url", "https://example.com/hook", "--events", "subscription.renewed",
		"--allow-insecure-webhooks"); res.code != 0 || res.stderr != "" {
		t.Errorf("an https URL needs no note: exit %d, stderr %q", res.code, res.stderr)
	}

	ev := webhookstest.Emit(t, db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := webhookstest.Deliveries(t, db, ev.ID)
		refused := 0
		for _, d := range ds {
			if d.Attempts > 0 {
				refused++
			}
		}
		if len(ds) == 1 && refused == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt within 30s: %+v", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res = run("webhook", "list", "--merchant", m)
	if res.code != 0 || !strings.Contains(res.stdout, "PENDING") ||
		!strings.Contains(res.stdout, "1 pending; last attempt: refused: http:// endpoint; deliveries need https (serve with --allow-insecure-webhooks") {
		t.Errorf("list: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	fits(t, "admin webhook list", strings.SplitN(res.stdout, "\nwe_", 2)[0], 80)
}

// IPv6 spellings of non-public IPv4 addresses are refused at registration,
// with invalid_request, as their IPv4 forms are.
func TestAdminWebhookAddRefusesEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	m, _ := merchantKey(t, db)
	for _, u := range []string{"https://[::127.0.0.1]/", "https://[::7f00:1]/hook", "https://[::a9fe:a9fe]/", "https://[::ffff:0:7f00:1]/",
		"https://[64:ff9b::a00:1]/", "https://[2002:7f00:1::]/", "https://[fec0::1]/"} {
		res := cliRun(t, nil, "admin", "webhook", "add", "--merchant", m, "--mode", "test", "--url", u, "--database-url", url)
		if res.code == 0 || !strings.Contains(res.stderr, "invalid_request") || !strings.Contains(res.stderr, "must be public") {
			t.Errorf("add %s: exit %d\nstdout %s\nstderr %s", u, res.code, res.stdout, res.stderr)
		}
	}
	res := cliRun(t, nil, "admin", "webhook", "list", "--merchant", m, "--json", "--database-url", url)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("list after refusals: exit %d %s", res.code, res.stdout)
	}
}

// A receiver that answers 410 Gone gets its endpoint disabled; `admin
// webhook show` and `list` say why and when, and `enable` clears it.
func TestAdminWebhookGoneDisables(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	startEventsDaemon(t, db, func(c *daemon.Config) {
		c.AllowInsecureWebhooks = true
		c.WebhookRetrySchedule = []time.Duration{20 * time.Millisecond}
	})
	m, _ := merchantKey(t, db)
	rc := webhookstest.NewReceiver(t, nil)
	rc.Status = func(int, webhookstest.Hook) int { return 410 }
	e := webhookstest.Endpoint(t, db, m, rc.URL+"/gone")
	webhookstest.Emit(t, db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	webhookstest.Eventually(t, 30*time.Second, "the endpoint disabled", func() bool {
		got, err := webhooks.Get(context.Background(), db, e.ID)
		return err == nil && !got.Enabled
	})
	run := func(args ...string) cliResult {
		return cliRun(t, nil, append(append([]string{"admin", "webhook"}, args...), "--database-url", url)...)
	}
	res := run("show", e.ID)
	if res.code != 0 || !strings.Contains(res.stdout, "disabled: the endpoint answered 410 Gone (20") || !strings.Contains(res.stdout, "Pending:      1") {
		t.Errorf("show: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = run("show", e.ID, "--json")
	if res.code != 0 || !strings.Contains(res.stdout, `"disabled_reason": "the endpoint answered 410 Gone"`) {
		t.Errorf("show --json: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = run("list", "--merchant", m)
	if res.code != 0 || !strings.Contains(res.stdout, e.ID+": disabled: the endpoint answered 410 Gone") {
		t.Errorf("list: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if n := rc.Count(); n != 1 {
		t.Errorf("%d requests to a gone endpoint, want 1", n)
	}
	if res := run("enable", e.ID); res.code != 0 {
		t.Fatalf("enable: %s", res.stderr)
	}
	res = run("show", e.ID)
	if res.code != 0 || !strings.Contains(res.stdout, "State:        enabled") {
		t.Errorf("show after enable: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := run("show", "we_nope"); res.code == 0 || !strings.Contains(res.stderr, "invalid_request") {
		t.Errorf("show of an unknown id: exit %d %s", res.code, res.stderr)
	}
}

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
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// usageAPI is a real daemon on a fresh database with a test key.
type usageAPI struct {
	url, key, dbURL string
	db              *store.DB
	c               *client.Client
}

func startUsageAPI(t *testing.T) *usageAPI {
	t.Helper()
	ctx := context.Background()
	dbURL := testdb.New(t)
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.RateLimits = false
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Shutdown(context.Background()) })
	m, err := auth.CreateMerchant(ctx, db, "usage")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, db, m.ID, tenant.Test)
	if err != nil {
		t.Fatal(err)
	}
	return &usageAPI{url: d.URL, key: key, dbURL: dbURL, db: db, c: client.New(d.URL, key)}
}

// cli runs the CLI against the daemon with stdin.
func (u *usageAPI) cli(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return u.cliWidth(t, 0, stdin, args...)
}

// cliWidth is cli on a terminal width columns wide (0: not a terminal).
func (u *usageAPI) cliWidth(t *testing.T, width int, stdin string, args ...string) cliResult {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args = append([]string{"--config", cfg, "--api-url", u.url, "--api-key", u.key}, args...)
	code := Run(context.Background(), args, &IO{In: strings.NewReader(stdin), Out: &out, Err: &errOut, Width: width})
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (u *usageAPI) sum(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := u.db.Get(&n, `SELECT coalesce(sum(value), 0) FROM meter_events`); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMeterSendFile(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	if _, err := u.c.CreateMeter(context.Background(), client.MeterParams{Key: "tokens", DisplayName: "Tokens"}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	var want int64
	for i := 1; i <= 1203; i++ {
		switch i {
		case 7:
			lines = append(lines, `{"event_name":"nope","value":1}`)
		case 600:
			lines = append(lines, `not json`)
		case 900:
			lines = append(lines, "")
		case 1001:
			lines = append(lines, `{"event_name":"tokens"}`)
		default:
			// Identical lines are distinct events: their keys differ by line.
			lines = append(lines, fmt.Sprintf(`{"event_name":"tokens","value":%d,"external_customer_id":"c%d"}`, i%5, i%3))
			want += int64(i % 5)
		}
	}
	lines = append(lines, `{"event_name":"tokens","value":5,"idempotency_key":"mine"}`)
	want += 5
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := u.cli(t, "", "meter", "send", "--file", path, "--batch-size", "100", "--concurrency", "3")
	if r.code != 1 || !strings.Contains(r.stdout, "Sent 1203 lines: 1200 accepted, 0 duplicates, 3 rejected") ||
		!strings.Contains(r.stdout, "line 7: unknown_meter") || !strings.Contains(r.stdout, "line 600: invalid_json") ||
		!strings.Contains(r.stdout, "line 1001: missing_value") || r.stderr != "" {
		t.Fatalf("first run: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := u.sum(t); got != want {
		t.Fatalf("stored %d, want %d", got, want)
	}
	// Again: everything is a duplicate and nothing counts twice, and
	// stderr says so, and why, even with --json.
	r = u.cli(t, "", "meter", "send", "--file", path, "--json")
	var sum sendSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Accepted != 0 || sum.Duplicates != 1200 || sum.OwnKeyDuplicates != 1 ||
		sum.Rejected != 3 || len(sum.Errors) != 3 || !sum.Idempotent {
		t.Fatalf("rerun: %v %s", err, r.stdout)
	}
	for _, want := range []string{
		"1200 of 1203 lines were dropped as duplicates and not counted again",
		"1 of them carry their own idempotency_key",
		"1199 of them got keys derived from the file's content and their line numbers",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("rerun stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if got := u.sum(t); got != want {
		t.Fatalf("after rerun stored %d, want %d", got, want)
	}

	// stdin, namespaced by --key-prefix.
	in := `{"event_name":"tokens","value":2}` + "\n" + `{"event_name":"tokens","value":2}` + "\n"
	for _, tc := range []struct {
		prefix     string
		accepted   int
		duplicates int
	}{{"a", 2, 0}, {"a", 0, 2}, {"b", 2, 0}} {
		r = u.cli(t, in, "meter", "send", "--file", "-", "--key-prefix", tc.prefix, "--json")
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || r.code != 0 || sum.Accepted != tc.accepted || sum.Duplicates != tc.duplicates {
			t.Fatalf("stdin %s: %d %s %s", tc.prefix, r.code, r.stdout, r.stderr)
		}
	}
	if got := u.sum(t); got != want+8 {
		t.Fatalf("after stdin stored %d, want %d", got, want+8)
	}

	// One event from flags.
	r = u.cli(t, "", "meter", "send", "--event-name", "tokens", "--value", "4", "--external-customer-id", "solo", "--property", "model=x", "--json")
	var ev client.MeterEvent
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil || r.code != 0 || ev.Value != "4" || !strings.Contains(string(ev.Properties), `"model":"x"`) {
		t.Fatalf("single: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// A replay is the same event under the same key (a key reused for
	// another event is refused).
	r = u.cli(t, "", "meter", "send", "--event-name", "tokens", "--value", "4", "--external-customer-id", "solo", "--property", "model=x",
		"--idempotency-key", *ev.IdempotencyKey)
	if r.code != 0 || !strings.Contains(r.stdout, "Already recorded") {
		t.Fatalf("single replay: %d %s", r.code, r.stdout)
	}
	r = u.cli(t, "", "meter", "send", "--event-name", "nope", "--value", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "unknown_meter") {
		t.Fatalf("unknown meter: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{}, {"--file", path, "--event-name", "x"}, {"--file", path, "--batch-size", "501"}, {"--event-name", "x", "--timestamp", "now"}} {
		if r := u.cli(t, "", append([]string{"meter", "send"}, args...)...); r.code != 2 {
			t.Errorf("%v: want usage error, got %d %s", args, r.code, r.stderr)
		}
	}
}

func TestWithKey(t *testing.T) {
	a, own, _ := withKey("p", 1, `{"event_name":"x"}`)
	b, _, _ := withKey("p", 2, `{"event_name":"x"}`)
	c, _, _ := withKey("q", 1, `{"event_name":"x"}`)
	again, _, _ := withKey("p", 1, `{"event_name":"x"}`)
	if string(a) == string(b) || string(a) == string(c) || string(a) != string(again) || !json.Valid(a) || own {
		t.Fatalf("keys: %s %s %s", a, b, c)
	}
	if e, _, _ := withKey("p", 1, `{}`); !json.Valid(e) {
		t.Fatalf("empty object: %s", e)
	}
	if k, own, _ := withKey("p", 1, `{"idempotency_key":"own"}`); string(k) != `{"idempotency_key":"own"}` || !own {
		t.Fatalf("own key replaced: %s", k)
	}
	for _, bad := range []string{`[1]`, `{"a":`, `"x"`} {
		if _, _, err := withKey("p", 1, bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestEntitlementsCommands(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	m, err := u.c.CreateMeter(context.Background(), client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		t.Fatal(err)
	}
	r := u.cli(t, "", "feature", "create", "--key", "api", "--name", "API", "--type", "metered", "--meter", m.ID, "--json")
	var ft client.Feature
	if err := json.Unmarshal([]byte(r.stdout), &ft); err != nil || r.code != 0 || ft.MeterID == nil || *ft.MeterID != m.ID {
		t.Fatalf("feature create: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := u.cli(t, "", "feature", "create", "--key", "x", "--name", "x", "--type", "metered"); r.code != 2 {
		t.Fatalf("metered without meter: %d", r.code)
	}
	r = u.cli(t, "", "entitlements", "grant", "--feature", "api", "--external-customer-id", "u1", "--limit", "2", "--json")
	var g client.EntitlementGrant
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil || r.code != 0 || *g.LimitValue != "2" {
		t.Fatalf("grant: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := u.cli(t, "", "entitlements", "check", g.CustomerID, "api"); r.code != 0 || !strings.Contains(r.stdout, "Entitled") || !strings.Contains(r.stdout, "active") {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for range 2 {
		if r := u.cli(t, "", "meter", "send", "--event-name", "calls", "--customer-id", g.CustomerID); r.code != 0 {
			t.Fatalf("send: %s", r.stderr)
		}
	}
	r = u.cli(t, "", "entitlements", "check", g.CustomerID, "api", "--json")
	var e client.Entitlement
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || r.code != ExitNotEntitled || e.Reason != "limit_exceeded" || *e.Used != "2" || r.stderr != "" {
		t.Fatalf("over limit: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := u.cli(t, "", "entitlements", "check", "cus_nope", "api"); r.code != 1 || !strings.Contains(r.stderr, "unknown_customer") {
		t.Fatalf("unknown customer: %d %s", r.code, r.stderr)
	}
	if r := u.cli(t, "", "entitlements", "grant", "--feature", "api"); r.code != 2 {
		t.Fatalf("grant without customer: %d", r.code)
	}
	if r := u.cli(t, "", "entitlements", "grant", "--feature", "api", "--customer-id", g.CustomerID, "--limit", "-1"); r.code != 2 {
		t.Fatalf("negative limit: %d", r.code)
	}
	// The operator revokes, at the merchant's test-clock time; checks say
	// so and exit 3.
	if r := u.cli(t, "", "clock", "advance", "--by", "720h"); r.code != 0 {
		t.Fatalf("clock advance: %d %s", r.code, r.stderr)
	}
	r = u.cli(t, "", "admin", "entitlement", "revoke", g.ID, "--database-url", u.dbURL, "--json")
	var revoked struct {
		ID        string    `json:"id"`
		RevokedAt time.Time `json:"revoked_at"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &revoked); err != nil || r.code != 0 || revoked.ID != g.ID {
		t.Fatalf("revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if revoked.RevokedAt.Before(time.Now().Add(719 * time.Hour)) {
		t.Fatalf("revoked at %s: not the test clock's time, 30 days ahead", revoked.RevokedAt)
	}
	if r := u.cli(t, "", "entitlements", "check", g.CustomerID, "api"); r.code != ExitNotEntitled || !strings.Contains(r.stdout, "revoked") {
		t.Fatalf("after revoke: %d %s", r.code, r.stdout)
	}
	if r := u.cli(t, "", "admin", "entitlement", "revoke", "ent_nope", "--database-url", u.dbURL); r.code != 1 {
		t.Fatalf("revoke unknown: %d", r.code)
	}
	assertAudited(t, u.db, "", audit.EntitlementGrantRevoke)
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&IO{Err: &buf, ErrIsTerminal: true}, 10)
	p.add(5)
	p.done()
	if !strings.Contains(buf.String(), "10/10") && !strings.Contains(buf.String(), "5/10") {
		t.Fatalf("no bar on a terminal: %q", buf.String())
	}
	buf.Reset()
	p = newProgress(&IO{Err: &buf}, 10)
	p.add(10)
	p.done()
	if buf.Len() != 0 {
		t.Fatalf("bar on a pipe: %q", buf.String())
	}
}

package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// sendJSON runs `meter send` with --json and decodes its summary.
func (u *usageAPI) sendJSON(t *testing.T, stdin string, args ...string) (sendSummary, cliResult) {
	t.Helper()
	r := u.cli(t, stdin, append([]string{"meter", "send", "--json"}, args...)...)
	var sum sendSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %v\nstdout %s\nstderr %s", args, err, r.stdout, r.stderr)
	}
	return sum, r
}

// Keys are derived only when asked: stdin lines are new events each run
// (a cron job resending the same lines counts them again), a file's reruns
// count nothing twice unless --idempotent=false.
func TestMeterSendDerivesKeysOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	if _, err := u.c.CreateMeter(context.Background(), client.MeterParams{Key: "tokens", DisplayName: "Tokens"}); err != nil {
		t.Fatal(err)
	}
	in := `{"event_name":"tokens","value":2}` + "\n" + `{"event_name":"tokens","value":3}` + "\n"
	var want int64
	expect := func(name string, sum sendSummary, r cliResult, accepted, duplicates int, idempotent bool, add int64) {
		t.Helper()
		want += add
		if r.code != 0 || sum.Accepted != accepted || sum.Duplicates != duplicates || sum.Idempotent != idempotent {
			t.Fatalf("%s: exit %d, %+v, stderr %q", name, r.code, sum, r.stderr)
		}
		if (duplicates > 0) != strings.Contains(r.stderr, "dropped as duplicates") {
			t.Fatalf("%s: duplicates %d but stderr %q", name, duplicates, r.stderr)
		}
		if got := u.sum(t); got != want {
			t.Fatalf("%s: stored %d, want %d", name, got, want)
		}
	}
	// stdin, as a cron job sends it: counted every time.
	for i := range 2 {
		sum, r := u.sendJSON(t, in, "--file", "-")
		expect(fmt.Sprint("stdin run ", i+1), sum, r, 2, 0, false, 5)
	}
	// stdin with --idempotent: the second run counts nothing, loudly.
	sum, r := u.sendJSON(t, in, "--file", "-", "--idempotent")
	expect("stdin --idempotent", sum, r, 2, 0, true, 5)
	sum, r = u.sendJSON(t, in, "--file", "-", "--idempotent")
	expect("stdin --idempotent again", sum, r, 0, 2, true, 0)
	if !strings.Contains(r.stderr, "2 of them got keys derived from --idempotent and their line numbers") {
		t.Fatalf("stdin --idempotent again: %q", r.stderr)
	}
	// --key-prefix implies --idempotent, in its own namespace.
	sum, r = u.sendJSON(t, in, "--file", "-", "--key-prefix", "2026-07-01")
	expect("stdin --key-prefix", sum, r, 2, 0, true, 5)
	r = u.cli(t, in, "meter", "send", "--file", "-", "--key-prefix", "2026-07-01")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Sent 2 lines: 0 accepted, 2 duplicates, 0 rejected\n") ||
		!strings.Contains(r.stderr, `derived from --key-prefix "2026-07-01"`) || !strings.Contains(r.stderr, "pass a new --key-prefix") {
		t.Fatalf("stdin --key-prefix again: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// A file: idempotent by default, every run new with --idempotent=false.
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	sum, r = u.sendJSON(t, "", "--file", path)
	expect("file", sum, r, 2, 0, true, 5)
	sum, r = u.sendJSON(t, "", "--file", path)
	expect("file again", sum, r, 0, 2, true, 0)
	for range 2 {
		sum, r = u.sendJSON(t, "", "--file", path, "--idempotent=false")
		expect("file --idempotent=false", sum, r, 2, 0, false, 5)
	}

	for _, args := range [][]string{
		{"--file", "-", "--idempotent=false", "--key-prefix", "p"},
		{"--event-name", "tokens", "--idempotent"},
		{"--event-name", "tokens", "--key-prefix", "p"},
	} {
		if r := u.cli(t, "", append([]string{"meter", "send"}, args...)...); r.code != ExitUsage {
			t.Errorf("%v: want usage error, got %d %s", args, r.code, r.stderr)
		}
	}
}

// Without derived keys a batch still carries keys made for the run, so a
// retry after a lost answer counts once, and as this run's: not as a
// duplicate.
func TestMeterSendRetryAfterLostAnswerCountsOnce(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	if _, err := u.c.CreateMeter(context.Background(), client.MeterParams{Key: "tokens", DisplayName: "Tokens"}); err != nil {
		t.Fatal(err)
	}
	var posts atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest(r.Method, u.url+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		if r.Method == http.MethodPost && posts.Add(1) == 1 {
			panic(http.ErrAbortHandler) // stored, but the answer is lost
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	in := `{"event_name":"tokens","value":2}` + "\n" + `{"event_name":"tokens","value":3}` + "\n"
	r := u.cli(t, in, "meter", "send", "--file", "-", "--api-url", proxy.URL, "--json")
	var sum sendSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || r.code != 0 || sum.Accepted != 2 || sum.Duplicates != 0 || r.stderr != "" {
		t.Fatalf("exit %d, %s, stderr %q", r.code, r.stdout, r.stderr)
	}
	if posts.Load() != 2 {
		t.Fatalf("%d POSTs, want 2 (one lost answer, one retry)", posts.Load())
	}
	if got := u.sum(t); got != 5 {
		t.Fatalf("stored %d, want 5", got)
	}
}

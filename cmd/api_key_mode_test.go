package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAPIKeyByMode: with keys of both modes in the config file, a command
// uses the key of the mode it needs: --live the live key, the test clock
// the test key, the rest api_key first; a mode with no key is an error
// saying how to make one, and --api-key always wins.
func TestAPIKeyByMode(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[],"has_more":false,"next_cursor":null,"now":"2026-01-01T00:00:00Z"}`))
	}))
	t.Cleanup(srv.Close)
	used := func(cfg string, args ...string) (string, int, string) {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		code, _, errOut := run(append([]string{"--config", cfg, "--api-url", srv.URL}, args...)...)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			return "", code, errOut
		}
		return seen[0], code, errOut
	}
	dir := t.TempDir()
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("test_api_key: sk_test_t\nlive_api_key: sk_live_l\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.yaml")
	if err := os.WriteFile(first, []byte("api_key: sk_test_first\nlive_api_key: sk_live_l\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	onlyTest := filepath.Join(dir, "test.yaml")
	if err := os.WriteFile(onlyTest, []byte("api_key: sk_test_only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  string
		args []string
		key  string
	}{
		{both, []string{"invoice", "list"}, "sk_test_t"},
		{both, []string{"--live", "invoice", "list"}, "sk_live_l"},
		{both, []string{"clock", "show"}, "sk_test_t"},
		{first, []string{"invoice", "list"}, "sk_test_first"},
		{first, []string{"--live", "payments", "list"}, "sk_live_l"},
		{first, []string{"clock", "show"}, "sk_test_first"},
		{onlyTest, []string{"invoice", "list"}, "sk_test_only"},
		{both, []string{"--live", "--api-key", "sk_test_given", "invoice", "list"}, "sk_test_given"},
	} {
		if got, code, errOut := used(c.cfg, c.args...); got != c.key {
			t.Errorf("%s %v: used %q (exit %d, %s), want %q", filepath.Base(c.cfg), c.args, got, code, errOut, c.key)
		}
	}
	if got, code, errOut := used(onlyTest, "--live", "invoice", "list"); got != "" || code != ExitAuth ||
		!strings.Contains(errOut, "no live API key: create one with `tollgate admin key create --merchant ID --mode live --save`") {
		t.Errorf("--live with only a test key: used %q, exit %d, %s", got, code, errOut)
	}
	if got, code, errOut := used(both, "--live", "clock", "show"); got != "" || code != ExitUsage || !strings.Contains(errOut, "test mode only") {
		t.Errorf("--live clock show: used %q, exit %d, %s", got, code, errOut)
	}
}

// FuzzParseMints reads arbitrary --mint values: never a panic, every
// refusal a usage error, and what is accepted a positive amount.
func FuzzParseMints(f *testing.F) {
	for _, s := range []string{"0xa0Ee7A142d267C1f36714E4a8F75612F20a79720=1000usdc", "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
		"0x12=5", "=", "0xa0ee7a142d267c1f36714e4a8f75612f20a79720=-1", "0xa0ee7a142d267c1f36714e4a8f75612f20a79720=99999999999999999999usdc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ms, err := parseMints([]string{v})
		if err != nil {
			if exitCode(err) != ExitUsage {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		if len(ms) != 1 || ms[0].amount <= 0 {
			t.Fatalf("%q: %+v", v, ms)
		}
	})
}

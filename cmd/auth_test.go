package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A key that was sent is never called missing: the daemon says invalid or
// revoked, and the CLI says where the refused key came from.
func TestRefusedKeyMessages(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	ctx := context.Background()
	ms, err := auth.ListMerchants(ctx, u.db)
	if err != nil || len(ms) != 1 {
		t.Fatal(ms, err)
	}
	k, revoked, err := auth.CreateKey(ctx, u.db, ms[0].ID, tenant.Test)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.RevokeKey(ctx, u.db, k.ID); err != nil {
		t.Fatal(err)
	}
	wrong := u.key[:len(u.key)-1] + "x"
	if wrong == u.key {
		wrong = u.key[:len(u.key)-1] + "y"
	}
	for key, want := range map[string]string{
		wrong:                "unauthorized: invalid API key",
		"sk_test_wrong":      "unauthorized: invalid API key",
		u.key + "0":          "unauthorized: invalid API key",
		revoked:              "unauthorized: revoked API key",
		"not-a-key-at-all-1": "unauthorized: invalid API key",
	} {
		r := u.cli(t, "", "invoice", "list", "--api-key", key)
		if r.code != ExitAuth || r.stdout != "" || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "missing") ||
			!strings.Contains(r.stderr, "the API refused the key from --api-key") {
			t.Errorf("key %q: exit %d, stderr %q; want %q", key, r.code, r.stderr, want)
		}
	}
	// A usage error is not blamed on the key.
	if r := u.cli(t, "", "invoice", "list", "--limit", "500"); strings.Contains(r.stderr, "refused the key") {
		t.Errorf("usage error blames the key: %q", r.stderr)
	}
}

func TestRefusedKeyNamesItsSource(t *testing.T) {
	// Not parallel: it sets TOLLGATE_API_KEY.
	api := newFakeAPI(t)
	t.Setenv("TOLLGATE_API_KEY", "sk_test_from_env")
	res := cliRun(t, nil, "invoice", "list", "--api-url", api.url)
	if res.code != ExitAuth || !strings.Contains(res.stderr, "the API refused the key from TOLLGATE_API_KEY") {
		t.Errorf("env key: exit %d, stderr %q", res.code, res.stderr)
	}
	t.Setenv("TOLLGATE_API_KEY", "")
	res = cliRun(t, nil, "invoice", "list", "--api-url", api.url, "--api-key", "sk_test_flag")
	if res.code != ExitAuth || !strings.Contains(res.stderr, "the API refused the key from --api-key") {
		t.Errorf("flag key: exit %d, stderr %q", res.code, res.stderr)
	}
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(cfg, []byte("api_key: sk_test_cfg\napi_url: "+api.url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = cliRun(t, nil, "invoice", "list", "--config", cfg)
	if res.code != ExitAuth || !strings.Contains(res.stderr, "the API refused the key from the config file "+cfg) {
		t.Errorf("config key: exit %d, stderr %q", res.code, res.stderr)
	}
}

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/ratelimit"
)

func serveConfigFrom(t *testing.T, file string, args ...string) (*Factory, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	f := NewFactory(&IO{In: strings.NewReader(""), Out: os.Stdout, Err: os.Stderr})
	serve, _, err := NewRootCmd(f).Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.ParseFlags(append([]string{"--config", path}, args...)); err != nil {
		t.Fatal(err)
	}
	return f, f.bindFlags(serve)
}

// flags > TOLLGATE_* env > config file > defaults.
func TestServeConfigPrecedence(t *testing.T) {
	t.Setenv("TOLLGATE_ENVIRONMENT", "live")
	t.Setenv("TOLLGATE_LISTEN", "127.0.0.1:7000")
	f, err := serveConfigFrom(t, "listen: 127.0.0.1:6000\nbase_url: https://pay.example.com\nenvironment: test\nwebhook_retry_schedule: 1s,2s\nrate_limit_per_minute:\n  list: 5\n  meter_events: 0\n",
		"--listen", "127.0.0.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.serveConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9000" || cfg.Environment != "live" || cfg.BaseURL != "https://pay.example.com" {
		t.Fatalf("precedence wrong: %+v", cfg)
	}
	if cfg.Limits[ratelimit.ClassList] != 5 || cfg.Limits[ratelimit.ClassMeterEvents] != 0 || cfg.Limits[ratelimit.ClassCreate] != 60 {
		t.Fatalf("limits: %v", cfg.Limits)
	}
	if len(cfg.WebhookRetrySchedule) != 2 || cfg.WebhookRetrySchedule[1] != 2*time.Second || !cfg.RateLimits {
		t.Fatalf("schedule/rate limits: %+v", cfg)
	}
}

func TestServeConfigRejectsBadValues(t *testing.T) {
	for file, want := range map[string]string{
		"rate_limit_per_minute:\n  bogus: 5\n":   "unknown class",
		"rate_limit_per_minute:\n  list: many\n": "must be an integer",
		"webhook_retry_schedule: soon\n":         "webhook-retry-schedule",
		"environment: staging\n":                 "--environment",
		"retention: 30d\n":                       "at least 35 days",
		"retention: forever\n":                   "--retention",
	} {
		f, err := serveConfigFrom(t, file)
		if err == nil {
			_, err = f.serveConfig()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: got %v, want %q", file, err, want)
		}
	}
}

// --retention reads days or a duration, from each source; the feed's
// retention follows it down.
func TestServeConfigRetention(t *testing.T) {
	for _, c := range []struct {
		file, env  string
		args       []string
		want, feed time.Duration
	}{
		{"", "", nil, 0, 30 * 24 * time.Hour},
		{"retention: 400d\n", "", nil, 400 * 24 * time.Hour, 30 * 24 * time.Hour},
		{"retention: 400d\n", "1000h", nil, 1000 * time.Hour, 30 * 24 * time.Hour},
		{"", "", []string{"--retention", "36d", "--event-retention", "2000h"}, 36 * 24 * time.Hour, 36 * 24 * time.Hour},
	} {
		if c.env != "" {
			t.Setenv("TOLLGATE_RETENTION", c.env)
		}
		f, err := serveConfigFrom(t, c.file, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := f.serveConfig()
		if err != nil || cfg.Retention != c.want || cfg.EventRetention != c.feed {
			t.Fatalf("%+v: retention %s, feed %s: %v", c, cfg.Retention, cfg.EventRetention, err)
		}
	}
}

// A config file the user named must exist; the default one may be missing.
func TestNamedConfigFileMustExist(t *testing.T) {
	// Not parallel: it sets TOLLGATE_CONFIG and XDG_CONFIG_HOME.
	api := newFakeAPI(t)
	api.addInvoices(1)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	runWith := func(args ...string) cliResult {
		var out, errOut strings.Builder
		code := Run(context.Background(), args, &IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the default path: missing
	t.Setenv("TOLLGATE_CONFIG", "")
	want := "config file " + missing + " does not exist"
	for _, args := range [][]string{
		api.args("--config", missing, "invoice", "list"),
		api.args("invoice", "list", "--config", missing),
		{"--config", missing, "version"},
		{"--config", missing, "admin", "merchant", "list", "--database-url", "postgres://127.0.0.1:1/x"},
	} {
		res := runWith(args...)
		if res.code != ExitUsage || res.stdout != "" || !strings.Contains(res.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", args, res.code, res.stderr, want)
		}
	}
	if n := api.requests(); n != 0 {
		t.Errorf("%d requests reached the API", n)
	}
	// The default path missing is fine.
	if res := runWith(api.args("invoice", "list")...); res.code != 0 || !strings.Contains(res.stdout, "inv_0") {
		t.Errorf("default config missing: exit %d, stderr %q", res.code, res.stderr)
	}
	// TOLLGATE_CONFIG names a file as --config does.
	t.Setenv("TOLLGATE_CONFIG", missing)
	if res := runWith(api.args("invoice", "list")...); res.code != ExitUsage || !strings.Contains(res.stderr, want) {
		t.Errorf("TOLLGATE_CONFIG: exit %d, stderr %q", res.code, res.stderr)
	}
	t.Setenv("TOLLGATE_CONFIG", "")

	// serve saves its first key to the file it is given, so a missing one
	// is allowed there, with a line that says so.
	var errOut strings.Builder
	f := NewFactory(&IO{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &errOut})
	serve, _, err := NewRootCmd(f).Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.ParseFlags([]string{"--config", missing}); err != nil {
		t.Fatal(err)
	}
	if err := f.bindFlags(serve); err != nil || !strings.Contains(errOut.String(), missing+" does not exist yet") {
		t.Errorf("serve: %v, stderr %q", err, errOut.String())
	}
}

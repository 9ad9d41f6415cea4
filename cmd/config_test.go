package cmd

import (
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

package cmd

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

func newServeCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the tollgate daemon (REST API, webhooks, checkout pages)",
		Long: `Run the tollgate daemon.

With no --database-url, tollgate runs its embedded default: a private
PostgreSQL cluster under --data-dir, started and stopped with the daemon. On
its first start it creates a merchant and a test API key, prints the key once
and saves it with the API URL to the CLI config file. The merchant's name is
what checkout pages show ("Invoice from NAME"): --merchant-name, else asked
for when serve runs on a terminal, else "default". "tollgate admin merchant
rename" changes it at any time.

Live mode settles on an EVM chain with --chain-rpc-url, --usdc-address,
--plan-manager-address and --relayer-key-file: payers sign, the relayer pays
the gas, and a payment counts after --confirmations blocks. On a local dev
chain, --clock chain bills by the chain's time (tollgate help live-mode).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.String("listen", "127.0.0.1:8080", "address to serve HTTP on")
	fl.String("base-url", "", "public URL of this daemon, used in checkout links (default http://<listen>)")
	fl.String("merchant-name", "", "name of the merchant created at first start, shown on checkout pages (default: asked on a terminal, else \"default\")")
	fl.String("environment", "any", "accept create requests from any, test or live keys")
	fl.Bool("allow-insecure-webhooks", false, "allow http:// webhook URLs and private addresses (development)")
	fl.Bool("dashboard-require-2fa", false, "make merchant dashboard users enrol an authenticator app (TOTP) before anything else")
	fl.String("webhook-ca-file", "", "PEM file of extra trusted roots for webhook endpoints")
	fl.String("webhook-retry-schedule", "1m,5m,30m,120m", "delays before webhook retries, comma separated")
	fl.Bool("rate-limits", true, "enforce per-key rate limits (set per-class limits under rate_limit_per_minute in the config file)")
	fl.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	fl.String("dunning-schedule", "24h,72h,120h", "when a failed subscription renewal is retried, as offsets from the failure, comma separated")
	fl.Duration("usage-grace", time.Hour, "how long after a metered period ends its usage is rated (late events within it still count)")
	fl.Duration("event-retention", events.DefaultRetention, "how long events, their deliveries and attempts are kept (at least 30 days is the promise)")
	fl.String("retention", "", "how long usage events are kept, e.g. 400d (default: for ever); older weeks are dropped once rated, summaries keep answering from hourly and daily totals")
	limitFlags(fl)
	dbFlags(cmd)
	chainFlags(cmd)
	serveChainFlags(cmd)
	return cmd
}

// serveConfig reads the daemon's typed configuration from viper.
func (f *Factory) serveConfig() (daemon.Config, error) {
	var err error
	cfg := daemon.Defaults()
	cfg.Listen = f.v.GetString("listen")
	cfg.BaseURL = f.v.GetString("base_url")
	cfg.Environment = f.v.GetString("environment")
	cfg.AllowInsecureWebhooks = f.v.GetBool("allow_insecure_webhooks")
	cfg.DashboardRequire2FA = f.v.GetBool("dashboard_require_2fa")
	cfg.WebhookCAFile = f.v.GetString("webhook_ca_file")
	cfg.RateLimits = f.v.GetBool("rate_limits")
	cfg.ShutdownTimeout = f.v.GetDuration("shutdown_timeout")
	cfg.EventRetention = f.v.GetDuration("event_retention")
	if cfg.EventRetention <= 0 {
		return cfg, usageError("--event-retention must be positive")
	}
	if cfg.Retention, err = parseRetention(f.v.GetString("retention")); err != nil {
		return cfg, usageError("--retention: %v", err)
	}
	cfg.Version = version
	sched, err := parseSchedule(f.v.GetString("webhook_retry_schedule"))
	if err != nil {
		return cfg, usageError("--webhook-retry-schedule: %v", err)
	}
	cfg.WebhookRetrySchedule = sched
	dunning, err := parseSchedule(f.v.GetString("dunning_schedule"))
	if err != nil {
		return cfg, usageError("--dunning-schedule: %v", err)
	}
	cfg.DunningSchedule = dunning
	if cfg.UsageGrace = f.v.GetDuration("usage_grace"); cfg.UsageGrace <= 0 {
		return cfg, usageError("--usage-grace must be positive")
	}
	cfg.Chain = f.chainConfig()
	if err := f.limitConfig(&cfg); err != nil {
		return cfg, err
	}
	for class, n := range f.v.GetStringMap("rate_limit_per_minute") {
		c := ratelimit.Class(class)
		if _, known := cfg.Limits[c]; !known {
			return cfg, fmt.Errorf("config rate_limit_per_minute: unknown class %q", class)
		}
		v, ok := toInt(n)
		if !ok {
			return cfg, fmt.Errorf("config rate_limit_per_minute.%s: must be an integer", class)
		}
		cfg.Limits[c] = v
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError("%v", err)
	}
	return cfg, nil
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

func parseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q is not a positive duration such as 1m", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseRetention reads --retention: days (400d), or any Go duration
// (9600h); empty or 0 keeps usage events for ever.
func parseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100_000 {
			return 0, fmt.Errorf("%q is not a positive number of days such as 400d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 400d", s)
	}
	return d, nil
}

func runServe(ctx context.Context, f *Factory) error {
	cfg, err := f.serveConfig()
	if err != nil {
		return err
	}
	tuneGC(os.Getenv)
	log := f.newLogger(slog.LevelInfo)
	start := time.Now()
	db, err := f.openDatabase(ctx, log, true)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	d, err := daemon.Start(cfg, db.DB, log)
	if err != nil {
		return err
	}
	if db.Embedded {
		// Interrupted by a shutdown signal, bootstrap's failure is no
		// error: the daemon shuts down gracefully below.
		if err := f.bootstrap(ctx, db, d.URL, f.v.GetString("merchant_name")); err != nil && ctx.Err() == nil {
			_ = d.Shutdown(ctx)
			return err
		}
	}
	if !cfg.Chain.Enabled() {
		if n, err := auth.CountLiveKeys(ctx, db.DB); err == nil && n > 0 {
			log.Warn("live API keys exist but no on-chain settlement is configured: live checkouts cannot be paid", "live_keys", n)
		}
	}
	log.Info("tollgate serving", "url", d.URL, "version", version, "embedded_db", db.Embedded, "startup", time.Since(start).Round(time.Millisecond))
	select {
	case <-ctx.Done():
		log.Info("shutting down; finishing in-flight requests", "timeout", cfg.ShutdownTimeout)
	case <-d.Done():
		return d.Err()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	return d.Shutdown(sctx)
}

// bootstrap makes a fresh embedded default usable at once: a merchant named
// name (asked for on a terminal when empty) and a test key, printed once and
// saved for the CLI unless a key is already configured.
func (f *Factory) bootstrap(ctx context.Context, db *database, apiURL, name string) error {
	ms, err := auth.ListMerchants(ctx, db.DB)
	if err != nil {
		return err
	}
	if len(ms) > 0 {
		if name != "" && (len(ms) != 1 || ms[0].Name != strings.TrimSpace(name)) {
			fmt.Fprintln(f.IO.Err, "tollgate: --merchant-name names the merchant created at first start; to rename one: tollgate admin merchant rename MERCHANT_ID --name NAME")
		}
		return nil
	}
	if name == "" {
		if name, err = f.askMerchantName(ctx); err != nil {
			return err
		}
	}
	var m auth.Merchant
	var secret string
	err = db.DB.InTx(ctx, func(tx *store.Tx) error {
		if m, err = auth.CreateMerchant(ctx, tx, name); err != nil {
			return err
		}
		_, secret, err = auth.CreateKey(ctx, tx, m.ID, tenant.Test)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Err, "\nCreated merchant %q (%s) and a test API key (shown once):\n\n    %s\n\n", m.Name, m.ID, secret)
	if m.Name == defaultMerchantName {
		fmt.Fprintf(f.IO.Err, "Checkout pages say \"Invoice from %s\"; to show your business's name: tollgate admin merchant rename %s --name NAME\n\n", m.Name, m.ID)
	}
	if f.v.GetString("api_key") != "" {
		fmt.Fprintln(f.IO.Err, "An API key is already configured; the new key was not saved.")
		return nil
	}
	path := f.configPath()
	if err := saveCLIConfig(path, apiURL, secret); err != nil {
		return fmt.Errorf("saving the key to %s: %w", path, err)
	}
	fmt.Fprintf(f.IO.Err, "Saved it with api_url %s to %s; `tollgate invoice list` works now.\n\n", apiURL, path)
	return nil
}

// saveCLIConfig sets api_url and api_key in the YAML config file at path,
// keeping its other settings, with mode 0600.
func saveCLIConfig(path, apiURL, key string) error {
	return updateConfigFile(path, map[string]any{"api_url": apiURL, "api_key": key})
}

// defaultMerchantName names the first merchant when nobody said otherwise:
// scripts and existing setups have always found this one.
const defaultMerchantName = "default"

// askMerchantName asks the person at the terminal for the first merchant's
// name; without a terminal (or an answer) it is defaultMerchantName.
func (f *Factory) askMerchantName(ctx context.Context) (string, error) {
	if !f.IO.InIsTerminal || !f.IO.ErrIsTerminal {
		return defaultMerchantName, nil
	}
	fmt.Fprintf(f.IO.Err, "Your business's name, shown to customers on checkout pages [%s]: ", defaultMerchantName)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		line <- s
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-line:
		if s = strings.TrimSpace(s); s != "" {
			return s, nil
		}
		return defaultMerchantName, nil
	}
}

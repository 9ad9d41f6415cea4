// Package daemon is everything `tollgate serve` runs: the HTTP server and its
// middleware, the REST handlers (thin adapters over internal domain
// packages), the checkout pages and the health and metrics endpoints.
package daemon

import (
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Config is the daemon's validated configuration.
type Config struct {
	// Listen is the TCP address to serve on (":0" picks a free port).
	Listen string
	// BaseURL prefixes checkout links; empty derives it from the listener.
	BaseURL string
	// Environment is "any", "test" or "live": with test or live, create
	// requests made with a key of the other mode get mode_mismatch.
	Environment string
	// RateLimits turns the per-key limiter on; Limits overrides the spec's
	// per-minute budgets per class.
	RateLimits bool
	Limits     map[ratelimit.Class]int
	// Webhook delivery settings (used by the delivery workers).
	AllowInsecureWebhooks bool
	// DashboardRequire2FA makes dashboard users enrol TOTP before any
	// page but Settings.
	DashboardRequire2FA  bool
	WebhookCAFile        string
	WebhookRetrySchedule []time.Duration
	// MaxBodyBytes bounds request bodies; MaxBatchBodyBytes bounds batch
	// ingestion bodies.
	MaxBodyBytes      int64
	MaxBatchBodyBytes int64
	// MCPMaxBatch bounds the messages of one JSON-RPC batch on the tool
	// server (batches exist only up to revision 2025-03-26), and
	// MCPMaxResponseBytes the size of a batch's answer.
	MCPMaxBatch         int
	MCPMaxResponseBytes int
	// MCPAllowedOrigins are browser origins allowed on the tool server
	// besides the base URL's own (and loopback ones for a loopback base
	// URL): mcp_origin.go.
	MCPAllowedOrigins []string
	// MaxConnections bounds the open connections (capped below the
	// process's file-handle limit at start), MaxConnectionsPerIP those
	// from one peer address; IdleTimeout closes a keep-alive connection
	// that has waited that long for its next request (connlimit.go).
	MaxConnections      int
	MaxConnectionsPerIP int
	IdleTimeout         time.Duration
	// DeliveryWorkers bounds the webhook attempts in flight at once; no
	// endpoint gets more than DeliveriesPerEndpoint of them, nor more than
	// its share among the endpoints in play, and slow ones are cut back
	// (deliveries_pace.go), so a slow one cannot hold the rest up. Half the workers: a slot is held until the
	// answer is recorded, and at 8 a single busy endpoint queued its own
	// events (200 grants/s: grant → delivery p50 82 ms; at 32, 3.9 ms).
	DeliveryWorkers       int
	DeliveriesPerEndpoint int
	// EventRetention is how long events, with their deliveries and
	// attempts, are kept.
	EventRetention time.Duration
	// Retention is how long usage events are kept (0: for ever): the
	// partitions whose whole week is older are dropped, unless a metered
	// period not yet rated needs them. Usage summaries keep answering for
	// those weeks from the hourly and daily buckets, which stay. When it is
	// shorter than EventRetention, the feed is kept only as long.
	Retention time.Duration
	// DunningSchedule lists when a failed renewal is retried, as offsets
	// from the failure; UsageGrace delays a metered period's rating past
	// its end.
	DunningSchedule []time.Duration
	UsageGrace      time.Duration
	// LiveRail settles live-mode payments; nil until the on-chain rail is
	// configured (live checkout then says payment is not available). Start
	// sets it from Chain.
	LiveRail rail.Rail
	// Chain configures the on-chain rail of live mode.
	Chain ChainConfig
	// ShutdownTimeout bounds how long in-flight requests may take to finish.
	ShutdownTimeout time.Duration
	// Version is reported in logs and the User-Agent of deliveries.
	Version string
	// Clock tells the daemon and its jobs the time (nil: the wall clock).
	Clock clock.Clock
}

// minRetention is the shortest Retention: a week may be dropped only once
// no event can still be written into it, and events are accepted up to
// metering.MaxAge late.
const minRetention = metering.MaxAge

// Defaults returns the configuration `tollgate serve` starts from.
func Defaults() Config {
	return Config{
		Listen:                "127.0.0.1:8080",
		Environment:           "any",
		RateLimits:            true,
		Limits:                ratelimit.DefaultLimits(),
		WebhookRetrySchedule:  []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 120 * time.Minute},
		MaxBodyBytes:          1 << 20,
		MaxBatchBodyBytes:     8 << 20,
		MCPMaxBatch:           16,
		MCPMaxResponseBytes:   4 << 20,
		MaxConnections:        4096,
		MaxConnectionsPerIP:   256,
		IdleTimeout:           30 * time.Second,
		DeliveryWorkers:       64,
		DeliveriesPerEndpoint: 32,
		EventRetention:        events.DefaultRetention,
		DunningSchedule:       subscriptions.DefaultPolicy().Dunning,
		UsageGrace:            subscriptions.DefaultPolicy().UsageGrace,
		ShutdownTimeout:       30 * time.Second,
		Version:               "dev",
		Clock:                 clock.System{},
	}
}

// Validate checks the configuration and fills zero values from Defaults.
func (c *Config) Validate() error {
	d := Defaults()
	switch c.Environment {
	case "":
		c.Environment = d.Environment
	case "any", string(tenant.Test), string(tenant.Live):
	default:
		return fmt.Errorf("--environment must be any, test or live, not %q", c.Environment)
	}
	if c.Listen == "" {
		c.Listen = d.Listen
	}
	if c.Limits == nil {
		c.Limits = d.Limits
	}
	for class, n := range c.Limits {
		if n < 0 {
			return fmt.Errorf("rate limit for %s must not be negative", class)
		}
	}
	if len(c.WebhookRetrySchedule) == 0 {
		c.WebhookRetrySchedule = d.WebhookRetrySchedule
	}
	for _, r := range c.WebhookRetrySchedule {
		if r <= 0 {
			return fmt.Errorf("--webhook-retry-schedule: every delay must be positive")
		}
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.MaxBatchBodyBytes <= 0 {
		c.MaxBatchBodyBytes = d.MaxBatchBodyBytes
	}
	if c.MCPMaxBatch <= 0 {
		c.MCPMaxBatch = d.MCPMaxBatch
	}
	if c.MCPMaxResponseBytes <= 0 {
		c.MCPMaxResponseBytes = d.MCPMaxResponseBytes
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = d.MaxConnections
	}
	if c.MaxConnectionsPerIP <= 0 {
		c.MaxConnectionsPerIP = d.MaxConnectionsPerIP
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.DeliveryWorkers <= 0 {
		c.DeliveryWorkers = d.DeliveryWorkers
	}
	if c.DeliveriesPerEndpoint <= 0 {
		c.DeliveriesPerEndpoint = d.DeliveriesPerEndpoint
	}
	switch {
	case c.EventRetention == 0:
		c.EventRetention = d.EventRetention
	case c.EventRetention < 0:
		return fmt.Errorf("--event-retention must be positive")
	}
	switch {
	case c.Retention < 0:
		return fmt.Errorf("--retention must not be negative")
	case c.Retention > 0 && c.Retention < minRetention:
		return fmt.Errorf("--retention must be at least %d days: usage events are accepted that late", minRetention/(24*time.Hour))
	case c.Retention > 0 && c.Retention < c.EventRetention:
		c.EventRetention = c.Retention
	}
	if len(c.DunningSchedule) == 0 {
		c.DunningSchedule = d.DunningSchedule
	}
	for i, r := range c.DunningSchedule {
		if r <= 0 || (i > 0 && r <= c.DunningSchedule[i-1]) {
			return fmt.Errorf("--dunning-schedule: retries are increasing positive offsets from the failure, e.g. 24h,72h,120h")
		}
	}
	switch {
	case c.UsageGrace == 0:
		c.UsageGrace = d.UsageGrace
	case c.UsageGrace < 0:
		return fmt.Errorf("--usage-grace must not be negative")
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = d.ShutdownTimeout
	}
	if c.Version == "" {
		c.Version = d.Version
	}
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	return c.Chain.validate()
}

package daemon_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

// Helpers of the webhook delivery tests.

// fastRetries is the retry schedule of delivery tests: five attempts within
// a fraction of a second.
var fastRetries = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}

// insecure lets a daemon deliver to the tests' loopback receivers.
func insecure(c *daemon.Config) { c.AllowInsecureWebhooks = true; c.WebhookRetrySchedule = fastRetries }

// setupListening is setup with the database URL given to the daemon, so its
// workers are woken by LISTEN/NOTIFY, as `tollgate serve` runs them.
func setupListening(t *testing.T, opts ...func(*daemon.Config)) *bundle {
	t.Helper()
	b, _ := setupListeningURL(t, opts...)
	return b
}

// setupListeningURL is setupListening that also returns the database URL.
func setupListeningURL(t *testing.T, opts ...func(*daemon.Config)) (*bundle, string) {
	t.Helper()
	url := testdb.New(t)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := startDaemon(t, db, url, opts...)
	return &bundle{t: t, db: db, d: d, url: d.URL}, url
}

// startDaemon starts a daemon over db (whose URL is url) on :0 and stops it
// in t.Cleanup.
func startDaemon(t testing.TB, db *store.DB, url string, opts ...func(*daemon.Config)) *daemon.Daemon {
	t.Helper()
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Shutdown(ctx)
	})
	return d
}

// The receiver and helpers are shared with the CLI's tests.
type (
	receiver = webhookstest.Receiver
	hook     = webhookstest.Hook
)

func newReceiver(t testing.TB, tlsConf *tls.Config) *receiver {
	return webhookstest.NewReceiver(t, tlsConf)
}

// endpoint registers url for merchant in test mode and returns it.
func (b *bundle) endpoint(merchantID, url string, types ...string) webhooks.Endpoint {
	b.t.Helper()
	return webhookstest.Endpoint(b.t, b.db, merchantID, url, types...)
}

func emit(t testing.TB, db *store.DB, s tenant.Scope, typ string, data any) events.Event {
	t.Helper()
	return webhookstest.Emit(t, db, s, typ, data)
}

func deliveriesOf(t testing.TB, db *store.DB, eventID string) []webhooks.Delivery {
	t.Helper()
	return webhookstest.Deliveries(t, db, eventID)
}

func settled(t testing.TB, db *store.DB, eventID string, limit time.Duration) []webhooks.Delivery {
	t.Helper()
	return webhookstest.Settled(t, db, eventID, limit)
}

func attemptsOf(t testing.TB, db *store.DB, deliveryID string) []webhooks.Attempt {
	t.Helper()
	return webhookstest.Attempts(t, db, deliveryID)
}

func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	webhookstest.Eventually(t, limit, what, cond)
}

func testCA(t *testing.T) (*tls.Config, string) { return webhookstest.TestCA(t) }

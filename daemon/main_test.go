package daemon_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/pgcluster"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// bundle is what an end-to-end test works with: a daemon on :0 over its own
// database, and helpers to make merchants, keys and clients.
type bundle struct {
	t   testing.TB
	db  *store.DB
	d   *daemon.Daemon
	url string
	// spec checks every /v1 exchange of the client and raw helpers against
	// the daemon's /openapi.json.
	spec *specCheck
	// stmts records every statement sent on db, the daemon's pool; the
	// test's end holds them to one merchant per row lock and no join
	// across merchants.
	stmts *testdb.Statements
}

// setup starts a daemon on a fresh database; opts adjust its config.
func setup(t testing.TB, opts ...func(*daemon.Config)) *bundle {
	t.Helper()
	// Every statement the test's daemon sends is held to the rules that
	// keep merchant tables distributable by merchant_id.
	stmts := &testdb.Statements{}
	db := testdb.OpenConfig(t, store.Config{Trace: stmts.Record})
	t.Cleanup(func() { stmts.Check(t, db) })
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	d, err := daemon.Start(cfg, db, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Shutdown(sctx)
	})
	return &bundle{t: t, db: db, d: d, url: d.URL, spec: newSpecCheck(t, d.URL), stmts: stmts}
}

// merchant creates a merchant and returns its id.
func (b *bundle) merchant(name string) string {
	b.t.Helper()
	m, err := auth.CreateMerchant(context.Background(), b.db, name)
	if err != nil {
		b.t.Fatal(err)
	}
	return m.ID
}

// key creates an API key and returns its id and secret.
func (b *bundle) key(merchantID string, mode tenant.Mode) (string, string) {
	b.t.Helper()
	k, secret, err := auth.CreateKey(context.Background(), b.db, merchantID, mode)
	if err != nil {
		b.t.Fatal(err)
	}
	return k.ID, secret
}

// client returns a client for a new merchant's key of mode, or for key.
func (b *bundle) client(key string) *client.Client {
	return client.New(b.url, key, client.WithMaxRetries(0), client.WithHTTPClient(b.httpClient()))
}

// testClient makes a merchant with a test key and returns its client.
func (b *bundle) testClient() (*client.Client, string) {
	_, key := b.key(b.merchant("acme"), tenant.Test)
	return b.client(key), key
}

// raw sends a request with an optional bearer key and returns status,
// headers and body.
func (b *bundle) raw(method, path, key, body string) (int, http.Header, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.url+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.httpClient().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// apiErr asserts err is a client.Error with status and code.
func apiErr(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *client.Error %d %s, got %T %v", status, code, err, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %d %s: %s", status, code, e.Status, e.Code, e.Message)
	}
	return e
}

// privateCluster starts a migrated PostgreSQL cluster of the test's own, for
// tests that stop and restart the database under a running daemon. It
// returns the cluster, its URL and an open pool.
func privateCluster(t *testing.T) (*pgcluster.Cluster, string, *store.DB) {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tgpc") // short: the socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cl := pgcluster.New(dir, nil)
	cl.Ephemeral = true
	if _, err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop(context.Background()) })
	url := cl.URL(pgcluster.Database)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := store.Migrate(ctx, db.DB.DB); err != nil {
		t.Fatal(err)
	}
	return cl, url, db
}

// testLogger discards the daemon's log, or with TOLLGATE_TEST_LOG set
// writes it to stderr (debugging a failing test).
func testLogger() *slog.Logger {
	if os.Getenv("TOLLGATE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

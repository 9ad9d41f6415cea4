package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
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

// hook is one request a receiver got.
type hook struct {
	at     time.Time
	header http.Header
	body   []byte
}

func (h hook) attempt() int { n, _ := strconv.Atoi(h.header.Get("wc-delivery-attempt")); return n }

// receiver is a webhook endpoint that records requests and answers with
// status(n) for the n-th request (from 1), 200 by default.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hooks  []hook
	status func(n int, h hook) int
	body   string // response body
	// before, if set, runs for every request before it is recorded and
	// answered (e.g. to hold one).
	before func(r *http.Request)
}

func newReceiver(t testing.TB, tlsConf *tls.Config) *receiver {
	rc := &receiver{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is read first: only then does the server notice a
		// client that goes away (r.Context() is cancelled).
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		before := rc.before
		rc.mu.Unlock()
		if before != nil {
			before(r)
		}
		h := hook{at: time.Now(), header: r.Header.Clone(), body: b}
		rc.mu.Lock()
		rc.hooks = append(rc.hooks, h)
		n, status, body := len(rc.hooks), rc.status, rc.body
		rc.mu.Unlock()
		code := 200
		if status != nil {
			code = status(n, h)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	})
	rc.Server = httptest.NewUnstartedServer(handler)
	if tlsConf != nil {
		rc.TLS = tlsConf
		rc.StartTLS()
	} else {
		rc.Start()
	}
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hook(nil), rc.hooks...)
}

func (rc *receiver) count() int { return len(rc.got()) }

// endpoint registers url for merchant in test mode and returns it (with its
// secret); types limits the event types.
func (b *bundle) endpoint(merchantID, url string, types ...string) webhooks.Endpoint {
	b.t.Helper()
	e, err := webhooks.Add(context.Background(), b.db, webhooks.Input{
		MerchantID: merchantID, Mode: tenant.Test, URL: url, EventTypes: types, AllowInsecure: true,
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return e
}

// emit records an event in its own transaction, as a domain change would.
func emit(t testing.TB, db *store.DB, s tenant.Scope, typ string, data any) events.Event {
	t.Helper()
	var ev events.Event
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		ev, err = events.Emit(context.Background(), tx, s, typ, time.Now(), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// deliveriesOf returns the deliveries of event eventID.
func deliveriesOf(t testing.TB, db *store.DB, eventID string) []webhooks.Delivery {
	t.Helper()
	ds, err := webhooks.ListDeliveries(context.Background(), db, webhooks.Filter{EventID: eventID})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// settled waits until every delivery of eventID is succeeded or failed and
// returns them.
func settled(t testing.TB, db *store.DB, eventID string, limit time.Duration) []webhooks.Delivery {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ds := deliveriesOf(t, db, eventID)
		done := len(ds) > 0
		for _, d := range ds {
			done = done && d.Status != webhooks.StatusPending
		}
		if done {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries of %s not settled within %v: %+v", eventID, limit, ds)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attemptsOf(t testing.TB, db *store.DB, deliveryID string) []webhooks.Attempt {
	t.Helper()
	_, as, err := webhooks.GetDelivery(context.Background(), db, deliveryID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testCA makes a CA and a server certificate for 127.0.0.1 and localhost
// signed by it; it returns the server's TLS config and the path of the CA's
// PEM file.
func testCA(t *testing.T) (*tls.Config, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tollgate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}, path
}

// body decodes a delivery body.
func (h hook) event(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(h.body, &m); err != nil {
		t.Fatalf("delivery body %q: %v", h.body, err)
	}
	return m
}

// Package webhookstest helps tests of webhook deliveries: a receiver that
// records what it is sent, a test CA for HTTPS receivers, and helpers that
// emit events and wait for their deliveries to settle. Tests only.
package webhookstest

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

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// Hook is one request a receiver got.
type Hook struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// Attempt is the request's wc-delivery-attempt header.
func (h Hook) Attempt() int { n, _ := strconv.Atoi(h.Header.Get("wc-delivery-attempt")); return n }

// Event decodes the request body.
func (h Hook) Event(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(h.Body, &m); err != nil {
		t.Fatalf("delivery body %q: %v", h.Body, err)
	}
	return m
}

// Receiver is a webhook endpoint that records requests and answers with
// Status(n) for the n-th request (from 1), 200 by default. Set its fields
// before events are sent to it.
type Receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hooks  []Hook
	Status func(n int, h Hook) int
	Reply  string // response body
	// Before, if set, runs for every request before it is recorded and
	// answered (e.g. to hold one).
	Before func(r *http.Request)
}

// NewReceiver starts a receiver (HTTPS with tlsConf, else HTTP), closed in
// t.Cleanup.
func NewReceiver(t testing.TB, tlsConf *tls.Config) *Receiver {
	rc := &Receiver{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is read first: only then does the server notice a
		// client that goes away (r.Context() is cancelled).
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		before := rc.Before
		rc.mu.Unlock()
		if before != nil {
			before(r)
		}
		h := Hook{At: time.Now(), Header: r.Header.Clone(), Body: b}
		rc.mu.Lock()
		rc.hooks = append(rc.hooks, h)
		n, status, body := len(rc.hooks), rc.Status, rc.Reply
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

// Got returns the requests received so far.
func (rc *Receiver) Got() []Hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Hook(nil), rc.hooks...)
}

// Count is the number of requests received so far.
func (rc *Receiver) Count() int { return len(rc.Got()) }

// Endpoint registers url for merchant in test mode and returns it (with its
// secret); types limits the event types.
func Endpoint(t testing.TB, db *store.DB, merchantID, url string, types ...string) webhooks.Endpoint {
	t.Helper()
	e, err := webhooks.Add(context.Background(), db, webhooks.Input{
		MerchantID: merchantID, Mode: tenant.Test, URL: url, EventTypes: types, AllowInsecure: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Emit records an event in its own transaction, as a domain change would.
func Emit(t testing.TB, db *store.DB, s tenant.Scope, typ string, data any) events.Event {
	t.Helper()
	ev, err := store.InTx(context.Background(), db, func(tx *store.Tx) (events.Event, error) {
		return events.Emit(context.Background(), tx, s, typ, time.Now(), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Deliveries returns the deliveries of event eventID.
func Deliveries(t testing.TB, db *store.DB, eventID string) []webhooks.Delivery {
	t.Helper()
	ds, err := webhooks.ListDeliveries(context.Background(), db, webhooks.Filter{EventID: eventID})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Settled waits until every delivery of eventID is succeeded or failed and
// returns them.
func Settled(t testing.TB, db *store.DB, eventID string, limit time.Duration) []webhooks.Delivery {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ds := Deliveries(t, db, eventID)
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

// Attempts returns the recorded attempts of a delivery, oldest first.
func Attempts(t testing.TB, db *store.DB, deliveryID string) []webhooks.Attempt {
	t.Helper()
	_, as, err := webhooks.GetDelivery(context.Background(), db, deliveryID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// Eventually polls cond until it holds, failing the test after limit.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCA makes a CA and a server certificate for 127.0.0.1 and localhost
// signed by it; it returns the server's TLS config and the path of the CA's
// PEM file.
func TestCA(t testing.TB) (*tls.Config, string) {
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

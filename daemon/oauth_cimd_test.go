package daemon_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/oauth"
)

// docServer serves client metadata documents over TLS and counts fetches.
type docServer struct {
	*httptest.Server
	caFile string
	mu     sync.Mutex
	docs   map[string]string // path → body
	hits   map[string]int
}

func newDocServer(t *testing.T) *docServer {
	t.Helper()
	ds := &docServer{docs: map[string]string{}, hits: map[string]int{}}
	ds.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ds.mu.Lock()
		body, ok := ds.docs[r.URL.Path]
		ds.hits[r.URL.Path]++
		ds.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	ds.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point of some tests
	ds.StartTLS()
	t.Cleanup(ds.Close)
	ds.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ds.Certificate().Raw})
	if err := os.WriteFile(ds.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return ds
}

// publish serves doc at path and returns the document's URL.
func (ds *docServer) publish(path string, doc map[string]any) string {
	u := ds.URL + path
	if _, ok := doc["client_id"]; !ok {
		doc["client_id"] = u
	}
	b, _ := json.Marshal(doc)
	ds.mu.Lock()
	ds.docs[path] = string(b)
	ds.mu.Unlock()
	return u
}

func (ds *docServer) fetches(path string) int {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.hits[path]
}

// A client identified by a metadata document URL: fetched through the
// SSRF-safe client (here allowed to reach loopback and trusting the test
// CA, as --allow-insecure-webhooks and --webhook-ca-file allow), validated,
// cached, and then used like a registered client.
func TestOAuthClientMetadataDocument(t *testing.T) {
	t.Parallel()
	ds := newDocServer(t)
	b := setup(t, func(c *daemon.Config) { c.AllowInsecureWebhooks = true; c.WebhookCAFile = ds.caFile })
	_, _, key := b.merchantKey()
	probe := b.probe(t)
	id := ds.publish("/oauth/client.json", map[string]any{
		"client_name": "Doc Client", "redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
	})
	c := &oauthClient{t: t, b: b, id: id, redirect: "http://127.0.0.1:51234/callback", browser: newBrowser()}
	resp, page := c.get(c.authorizeQuery(nil))
	if resp.StatusCode != 200 || !strings.Contains(page, "Doc Client") || !strings.Contains(page, "published by "+strings.TrimPrefix(ds.URL, "https://")) {
		t.Fatalf("consent page for a document client: %d %s", resp.StatusCode, page)
	}
	access, refresh := c.tokens(key, "write")
	if status, _, who := call(t, probe, access, "billing:write"); status != 200 || who["client"] != id {
		t.Fatalf("document client's token: %d %v", status, who)
	}
	if status, m := c.refresh(refresh, nil); status != 200 {
		t.Fatalf("document client's refresh: %d %v", status, m)
	}
	// Cached: the page and its submission made one fetch between them.
	if n := ds.fetches("/oauth/client.json"); n != 1 {
		t.Errorf("%d fetches, want 1 while the copy is fresh", n)
	}
	// A stale copy is fetched again, and changes to the document apply.
	ds.publish("/oauth/client.json", map[string]any{"client_id": id, "client_name": "Renamed", "redirect_uris": []string{"http://127.0.0.1/callback"}})
	if _, err := b.db.Exec(`UPDATE oauth_clients SET fetched_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	if _, page := c.get(c.authorizeQuery(nil)); !strings.Contains(page, "Renamed") || ds.fetches("/oauth/client.json") != 2 {
		t.Errorf("stale copy not refetched (%d fetches)", ds.fetches("/oauth/client.json"))
	}
	// An operator-revoked document client stays revoked however fresh its
	// document is, and its tokens stop working.
	if err := oauth.RevokeClient(context.Background(), b.db, id); err != nil {
		t.Fatal(err)
	}
	if resp, _ := c.get(c.authorizeQuery(nil)); resp.StatusCode != 400 {
		t.Errorf("revoked document client: %d", resp.StatusCode)
	}
	if status, _, _ := call(t, probe, access, ""); status != 401 {
		t.Errorf("token of a revoked client: %d", status)
	}

	// Documents that must be refused: an error page each, never a redirect.
	bad := map[string]map[string]any{
		"/wrong-id.json":   {"client_id": ds.URL + "/elsewhere.json", "redirect_uris": []string{"http://127.0.0.1/callback"}},
		"/bad-redirect":    {"redirect_uris": []string{"http://evil.example/cb"}},
		"/no-redirect":     {"client_name": "x"},
		"/secret-client":   {"redirect_uris": []string{"http://127.0.0.1/callback"}, "token_endpoint_auth_method": "client_secret_basic"},
		"/other-redirects": {"redirect_uris": []string{"https://app.example/cb"}},
	}
	for path, doc := range bad {
		d := &oauthClient{t: t, b: b, id: ds.publish(path, doc), redirect: "http://127.0.0.1:51234/callback", browser: newBrowser()}
		resp, body := d.get(d.authorizeQuery(nil))
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(body, `role="alert"`) {
			t.Errorf("%s: %d %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	ds.mu.Lock()
	ds.docs["/huge.json"] = `{"client_id":"` + ds.URL + `/huge.json","redirect_uris":["http://127.0.0.1/callback"],"pad":"` + strings.Repeat("x", 10<<10) + `"}`
	ds.mu.Unlock()
	for _, path := range []string{"/huge.json", "/missing.json"} {
		d := &oauthClient{t: t, b: b, id: ds.URL + path, redirect: "http://127.0.0.1:51234/callback", browser: newBrowser()}
		if resp, body := d.get(d.authorizeQuery(nil)); resp.StatusCode != 400 || !strings.Contains(body, "client metadata document") {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	for _, bad := range []string{ds.URL, ds.URL + "/", ds.URL + "/a/../b", "https://user@example.com/c", "https://example.com/c#f"} {
		d := &oauthClient{t: t, b: b, id: bad, redirect: "http://127.0.0.1:51234/callback", browser: newBrowser()}
		if resp, _ := d.get(d.authorizeQuery(nil)); resp.StatusCode != 400 {
			t.Errorf("client_id %q: %d", bad, resp.StatusCode)
		}
	}
}

// Without --allow-insecure-webhooks the document fetch refuses loopback
// addresses, and without the CA the test server's certificate.
func TestOAuthClientMetadataDocumentRefused(t *testing.T) {
	t.Parallel()
	ds := newDocServer(t)
	id := ds.publish("/client.json", map[string]any{"redirect_uris": []string{"http://127.0.0.1/callback"}})
	cases := map[string]func(*daemon.Config){
		"address":     func(c *daemon.Config) { c.WebhookCAFile = ds.caFile },
		"certificate": func(c *daemon.Config) { c.AllowInsecureWebhooks = true },
	}
	for want, opt := range cases {
		b := setup(t, opt)
		c := &oauthClient{t: t, b: b, id: id, redirect: "http://127.0.0.1:51234/callback", browser: newBrowser()}
		resp, body := c.get(c.authorizeQuery(nil))
		if resp.StatusCode != 400 || !strings.Contains(body, want) {
			t.Errorf("want an error page naming the %s: %d %s", want, resp.StatusCode, body)
		}
	}
	if n := ds.fetches("/client.json"); n != 0 {
		t.Errorf("document served %d times to daemons that must refuse it", n)
	}
}

package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
)

// Forward sends the compacted event, signed so that Verify accepts it, with
// the event headers, and reports the handler's answer whatever its status.
func TestForward(t *testing.T) {
	t.Parallel()
	type got struct {
		header http.Header
		body   []byte
	}
	received := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		received <- got{r.Header.Clone(), b}
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "nope: "+r.Method)
	}))
	defer srv.Close()

	raw := []byte("{\n  \"id\": \"evt_1\",\n  \"type\": \"credit.granted\",\n  \"data\": {\"amount\": \"5\"}\n}")
	status, answer, err := webhook.Forward(context.Background(), srv.Client(), srv.URL+"/hooks", secret, "ua/1", "credit.granted", "evt_1", raw)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusTeapot || string(answer) != "nope: POST" {
		t.Fatalf("Forward = %d %q, want 418 %q", status, answer, "nope: POST")
	}
	g := <-received
	const want = `{"id":"evt_1","type":"credit.granted","data":{"amount":"5"}}`
	if string(g.body) != want {
		t.Fatalf("body %s, want the compacted event %s", g.body, want)
	}
	if err := webhook.Verify(g.body, g.header.Get(webhook.HeaderName), secret, 0); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	for h, v := range map[string]string{"wc-event-type": "credit.granted", "wc-event-id": "evt_1", "User-Agent": "ua/1", "Content-Type": "application/json"} {
		if g.header.Get(h) != v {
			t.Errorf("%s = %q, want %q", h, g.header.Get(h), v)
		}
	}
}

// A handler that cannot be reached is an error, not a status.
func TestForwardUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	status, _, err := webhook.Forward(ctx, nil, url, secret, "", "t", "evt_1", []byte(`{}`))
	if err == nil || status != 0 {
		t.Fatalf("Forward to a closed server = %d, %v; want an error", status, err)
	}
	if _, _, err := webhook.Forward(ctx, nil, "://bad", secret, "", "t", "evt_1", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "missing protocol scheme") {
		t.Fatalf("bad URL: %v", err)
	}
}

// Compact leaves input that is not JSON unchanged.
func TestCompact(t *testing.T) {
	t.Parallel()
	if got := string(webhook.Compact([]byte("{ \"a\" : [1, 2] }"))); got != `{"a":[1,2]}` {
		t.Fatalf("Compact = %s", got)
	}
	if got := string(webhook.Compact([]byte("not json"))); got != "not json" {
		t.Fatalf("Compact(not json) = %s", got)
	}
}

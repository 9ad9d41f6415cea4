package cmd

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// A rate-limited command says so on stderr, once, and then succeeds; stdout
// keeps only the output.
func TestRateLimitedCommandSaysItIsWaiting(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"code":"rate_limited","message":"rate limit of 120 per minute exceeded"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[],"has_more":false,"next_cursor":null}`)
	}))
	t.Cleanup(srv.Close)
	res := cliRun(t, nil, "meter", "list", "--json", "--api-url", srv.URL, "--api-key", testKey)
	if res.code != 0 || !strings.HasPrefix(res.stdout, `{"object":"list"`) || res.stderr != "tollgate: rate limited (GET /v1/meters); retrying in 1 s\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if hits.Load() != 2 {
		t.Fatalf("%d requests, want 2", hits.Load())
	}
}

func TestRetryNoticeOncePerWait(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	f := NewFactory(&IO{Err: &errOut})
	limited := client.Retry{Method: "POST", Path: "/v1/meter-events", Attempt: 1, Wait: 13 * time.Second,
		Err: &client.Error{Status: 429, Code: client.CodeRateLimited, RetryAfter: 13 * time.Second}}
	for range 4 { // four workers hit the same limit
		f.retryNotice(limited)
	}
	f.retryNotice(client.Retry{Method: "GET", Path: "/v1/meters", Wait: 300 * time.Millisecond, Err: io.ErrUnexpectedEOF})
	want := "tollgate: rate limited (POST /v1/meter-events); retrying in 13 s\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut.String(), want)
	}
	errOut.Reset()
	f = NewFactory(&IO{Err: &errOut, ErrIsTerminal: true})
	f.retryNotice(client.Retry{Method: "GET", Path: "/v1/events", Wait: 1500 * time.Millisecond,
		Err: &client.Error{Status: 503, Code: client.CodeServiceUnavailable}})
	if want := "\r\x1b[Ktollgate: the API answered 503 service_unavailable (GET /v1/events); retrying in 2 s\n"; errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut.String(), want)
	}
	for d, want := range map[time.Duration]string{250 * time.Millisecond: "250 ms", time.Second: "1 s", 12100 * time.Millisecond: "13 s", time.Minute: "60 s"} {
		if got := waitString(d); got != want {
			t.Errorf("waitString(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestRetryNoticeSilencedForTheTUI(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	f := NewFactory(&IO{Err: &errOut})
	f.silenceRetryNotices()
	f.retryNotice(client.Retry{Method: "GET", Path: "/v1/events", Wait: time.Second, Err: &client.Error{Status: 429}})
	if errOut.Len() != 0 {
		t.Fatalf("stderr %q", errOut.String())
	}
}

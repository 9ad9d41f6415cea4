package daemon_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn sends req (a whole HTTP/1.1 request head, and whatever body
// bytes follow it) on a new connection and returns the connection and a
// reader of the answer.
func rawConn(t *testing.T, url, req string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

// readAnswer reads one response from br within limit.
func readAnswer(t *testing.T, conn net.Conn, br *bufio.Reader, limit time.Duration) (*http.Response, string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", limit, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// An unauthenticated request whose body never finishes is answered at
// once, from its headers, not after the read timeout.
func TestUnauthenticatedSlowBodyAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, head := range []string{
		"POST /v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"amount\":",
		"POST /v1/invoices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"amo\r\n",
		"POST /v1/invoices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_nope\r\nContent-Length: 100\r\n\r\n{",
		"POST /v1/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
		"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
	} {
		start := time.Now()
		conn, br := rawConn(t, b.url, head)
		resp, body := readAnswer(t, conn, br, 3*time.Second)
		if resp.StatusCode != 401 && resp.StatusCode != 404 {
			t.Errorf("%q: %d %s", head, resp.StatusCode, body)
		}
		if resp.Header.Get("wc-version") == "" || !strings.Contains(body, `"error"`) {
			t.Errorf("%q: %v %s", head, resp.Header, body)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q: answered after %v", head, d)
		}
	}
}

// Expect: 100-continue with a Content-Length past the limit is refused
// with 413 before the body is asked for.
func TestExpectContinueTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, tc := range []struct {
		path   string
		length int64
		want   int
	}{
		{"/v1/invoices", 1<<20 + 1, 413},
		{"/v1/meter-events", 8<<20 + 1, 413},
		{"/v1/invoices", 1 << 40, 413},
		{"/v1/invoices", 20, 100},
	} {
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n",
			tc.path, key, tc.length)
		conn, br := rawConn(t, b.url, head)
		_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s %d: %v", tc.path, tc.length, err)
		}
		if !strings.HasPrefix(line, fmt.Sprintf("HTTP/1.1 %d", tc.want)) {
			t.Errorf("%s %d: %q", tc.path, tc.length, line)
			continue
		}
		if tc.want != 413 {
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(line), br)), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if code, _ := errorBody(t, string(body)); code != "invalid_request" || resp.Header.Get("wc-version") == "" {
			t.Errorf("413: %s %v", body, resp.Header)
		}
	}
}

// Two Authorization headers are 401, even when both carry the right key.
func TestTwoAuthorizationHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, second := range []string{key, "sk_test_other"} {
		req, _ := http.NewRequest("GET", b.url+"/v1/invoices", nil)
		req.Header.Add("Authorization", "Bearer "+key)
		req.Header.Add("Authorization", "Bearer "+second)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if code, _ := errorBody(t, string(body)); resp.StatusCode != 401 || code != "unauthorized" {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
	}
	if status, _, _ := b.raw("GET", "/v1/invoices", key, ""); status != 200 {
		t.Fatalf("one header: %d", status)
	}
}

// Paths http.ServeMux would redirect with an HTML body are answered by the
// daemon: the 404 envelope with wc-version.
func TestUncleanPathsGetTheEnvelope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, p := range []string{"//v1/invoices", "/v1/./invoices", "/v1/x/../invoices", "/v1//invoices", "/v1", "/checkout//inv_x", "/v1/invoices/."} {
		for _, k := range []string{"", key} {
			conn, br := rawConn(t, b.url, "GET "+p+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+k+"\r\n\r\n")
			resp, body := readAnswer(t, conn, br, 3*time.Second)
			if resp.StatusCode == 200 || resp.StatusCode/100 == 3 || resp.Header.Get("wc-version") == "" {
				t.Errorf("%s: %d %v", p, resp.StatusCode, resp.Header)
				continue
			}
			errorBody(t, body)
		}
	}
}

// Checkout pages forbid framing, sniffing and leaking their URL.
func TestCheckoutSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	status, _, out := b.raw("POST", "/v1/invoices", key, `{"amount":1,"description":"x"}`)
	if status != 201 {
		t.Fatal(out)
	}
	id := out[strings.Index(out, `"id":"`)+6:]
	id = id[:strings.Index(id, `"`)]
	for _, p := range []string{"/checkout/" + id, "/checkout/inv_nope", "/checkout/%00"} {
		status, h, _ := b.raw("GET", p, "", "")
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" || h.Get("wc-version") == "" {
			t.Errorf("%s (%d): %v", p, status, h)
		}
	}
}

// Made-up methods fold into one label value: /metrics does not grow with
// them.
func TestMetricsLabelsAreBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	size := func() int {
		_, _, out := b.raw("GET", "/metrics", "", "")
		return len(out)
	}
	flood := func(round string, n int) {
		for i := range n {
			b.raw(fmt.Sprintf("%s%04d%s", round, i, strings.Repeat("X", 2000)), fmt.Sprintf("/v1/x%s%d", round, i), "", "")
			b.raw("GET", fmt.Sprintf("/nope/%s%d/%s", round, i, strings.Repeat("z", 1000)), "", "")
		}
	}
	flood("A", 5)
	size() // the scrape's own series
	before := size()
	flood("B", 300)
	after := size()
	if after > before+500 {
		t.Fatalf("/metrics grew from %d to %d bytes", before, after)
	}
	_, _, out := b.raw("GET", "/metrics", "", "")
	if strings.Contains(out, "XXXX") || strings.Contains(out, "zzzz") || !strings.Contains(out, `method="other"`) {
		t.Fatalf("metrics carry request text:\n%.2000s", out)
	}
}

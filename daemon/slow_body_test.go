package daemon_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request refused on its headers is answered from them: a client that
// sends only part of its body gets the refusal without the server waiting
// for the rest (which it used to, for the 60 s read timeout).
func TestRefusalsDoNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	addr := strings.TrimPrefix(b.url, "http://")
	for _, c := range []struct {
		path, headers string
		status        int
		want          string
	}{
		{"/api/mcp", "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", 401, `"unauthorized"`},
		{"/oauth/token", "Content-Type: text/plain\r\n", 400, `"invalid_request"`},
		{"/oauth/register", "Content-Type: text/plain\r\n", 400, `"invalid_client_metadata"`},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: 100000\r\n\r\n{\"jsonrpc\":", c.path, addr, c.headers)
		// Not a timing assertion: a bound on the wait, far below the
		// server's 60 s read timeout that the answer used to wait for.
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer before the rest of the body: %v", c.path, err)
		}
		var body strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != c.status || !strings.Contains(body.String(), c.want) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body.String())
		}
	}
}

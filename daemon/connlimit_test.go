package daemon_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// 3,000 connections with no key from thirteen addresses, half of them idle
// after one request on keep-alive and half silent, against a daemon that
// holds at most 600 (200 per address): /healthz and an authenticated call
// still answer, the connections past the caps are closed, and the
// process's RSS stays within 64 MiB of where it started. Not parallel:
// the RSS is the whole test process's.
func TestConnectionFloodBoundedMemory(t *testing.T) {
	b := setup(t, func(c *daemon.Config) {
		c.MaxConnections = 600
		c.MaxConnectionsPerIP = 200
	})
	_, key := b.testClient()
	addr := strings.TrimPrefix(b.url, "http://")
	const bound = 64 << 20
	base := settledRSS(t)
	stop := rssPeak(t)
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 3000 {
		// The last 300 from one address, past its cap of 200.
		ip := net.IPv4(127, 0, 0, byte(2+i%12))
		if i >= 2700 {
			ip = net.IPv4(127, 0, 0, 20)
		}
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			fmt.Fprintf(c, "GET /v1/invoices HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		}
	}
	// Read the answers of those that asked: a 401, or nothing on a
	// connection the limits closed.
	answered := 0
	for i, c := range conns {
		if i%2 == 0 {
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 401 {
					answered++
				}
			}
		}
	}
	if status, _, body := b.raw("GET", "/healthz", "", ""); status != 200 {
		t.Fatalf("/healthz under the flood: %d %s", status, body)
	}
	if status, _, body := b.raw("GET", "/v1/invoices", key, ""); status != 200 {
		t.Fatalf("an authenticated call under the flood: %d %s", status, body)
	}
	peak := stop()
	_, _, metrics := b.raw("GET", "/metrics", "", "")
	t.Logf("RSS: %d MiB before, %d MiB at the peak of 3,000 connections (bound: +%d MiB); %d of 1,500 requests answered 401",
		base>>20, peak>>20, bound>>20, answered)
	for _, reason := range []string{"per_ip", "made_room"} {
		if !strings.Contains(metrics, `tollgate_http_connections_shed_total{reason="`+reason+`"}`) {
			t.Errorf("no connection shed for %s", reason)
		}
	}
	if peak-base > bound {
		t.Fatalf("RSS grew by %d MiB under the flood, more than %d MiB", (peak-base)>>20, bound>>20)
	}
}

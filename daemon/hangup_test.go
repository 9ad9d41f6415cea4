package daemon_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// A client that hangs up before its answer is the client's cancellation:
// counted with status 499, logged at INFO, never a 503 that alerts on
// server errors would count. /readyz pings the database with the
// request's context, so a hang-up there fails the ping.
func TestHangUpsAreClientCancellations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	addr := strings.TrimPrefix(b.url, "http://")
	c, _ := b.testClient()
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "5000000", Description: "hang-up"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		path := []string{"/readyz", "/checkout/" + inv.ID}[i%2]
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
		conn.Close()
	}
	// The requests run after their clients left: wait until all are
	// counted, then check none is a 5xx.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, metrics := b.raw("GET", "/metrics", "", "")
		n, fivexx, closed := 0, 0, 0
		for _, line := range strings.Split(metrics, "\n") {
			if !strings.HasPrefix(line, "tollgate_http_requests_total{") ||
				!(strings.Contains(line, `route="GET /readyz"`) || strings.Contains(line, `route="GET /checkout/{id}"`)) {
				continue
			}
			var v int
			fmt.Sscanf(line[strings.LastIndexByte(line, ' ')+1:], "%d", &v)
			n += v
			if strings.Contains(line, `status="5`) {
				fivexx += v
			}
			if strings.Contains(line, `status="499"`) {
				closed += v
			}
		}
		if fivexx > 0 {
			t.Fatalf("hang-ups counted as server errors:\n%s", metrics)
		}
		if n >= 60 && closed == 0 {
			t.Fatalf("no request was cancelled by its client; the test proves nothing:\n%s", metrics)
		}
		if n >= 60 {
			t.Logf("%d requests counted, none a 5xx, %d cancelled by their client", n, closed)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 60 requests counted", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

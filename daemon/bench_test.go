package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
)

// Loopback HTTP benchmarks with 32 concurrent clients (rate limits off).
// Each reports requests/s and p50/p99 latency; BenchmarkHelloWorld measures
// a bare net/http handler in the same run as the yardstick:
//
//	go test ./daemon -run '^$' -bench 'Invoices|HelloWorld' -benchtime 5000x
const benchClients = 32

func BenchmarkHelloWorld(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"hello":"world"}`)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	load(b, "GET", "http://"+ln.Addr().String()+"/", "", "")
}

func BenchmarkInvoicesCreate(b *testing.B) {
	bb := setup(b, func(c *daemon.Config) { c.RateLimits = false })
	_, key := bb.testClient()
	load(b, "POST", bb.url+"/v1/invoices", key, `{"amount":"9000000","description":"Benchmark invoice","memo":"m"}`)
}

func BenchmarkInvoicesList(b *testing.B) {
	bb := setup(b, func(c *daemon.Config) { c.RateLimits = false })
	_, key := bb.testClient()
	for i := range 100 {
		bb.raw("POST", "/v1/invoices", key, fmt.Sprintf(`{"amount":%d,"description":"seed"}`, i+1))
	}
	load(b, "GET", bb.url+"/v1/invoices?limit=25", key, "")
}

// load sends b.N requests from benchClients goroutines and reports
// throughput and latency percentiles. Any non-2xx answer fails the run.
func load(b *testing.B, method, url, key, body string) { loadWith(b, method, url, key, body, nil) }

// loadWith is load with extra request headers.
func loadWith(b *testing.B, method, url, key, body string, header http.Header) {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients, DisableCompression: os.Getenv("BENCH_NO_GZIP") != ""}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
		next      = make(chan struct{}, b.N)
		wg        sync.WaitGroup
		failure   error
	)
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	b.ResetTimer()
	start := time.Now()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, b.N/benchClients+1)
			for range next {
				req, _ := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				for k, v := range header {
					req.Header[k] = v
				}
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode >= 300 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				mine = append(mine, time.Since(t0))
				if err != nil {
					mu.Lock()
					failure = err
					mu.Unlock()
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failure != nil {
		b.Fatal(failure)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(float64(len(latencies)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkEntitlementCheck is the access check merchants call on their
// request path, on a metered feature with a limit.
func BenchmarkEntitlementCheck(b *testing.B) {
	bb := setup(b, func(c *daemon.Config) { c.RateLimits = false })
	c, key := bb.testClient()
	cus := meteredGrant(b, c)
	load(b, "GET", bb.url+"/v1/customers/"+cus+"/entitlements/api", key, "")
}

// meteredGrant makes a count meter "calls", a metered feature "api" on it
// and a grant of it to customer u1, whose id it returns.
func meteredGrant(b *testing.B, c *client.Client) string {
	b.Helper()
	ctx := context.Background()
	m, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "api", Name: "API", Type: "metered", Meter: m.ID}); err != nil {
		b.Fatal(err)
	}
	g, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "api", ExternalCustomerID: "u1", LimitValue: "1000000000"})
	if err != nil {
		b.Fatal(err)
	}
	return g.CustomerID
}

package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
)

// BenchmarkMixedWorkload runs usage ingestion, entitlement checks, invoice
// creates and credit debits at once against one daemon and database, for
// 10 s per iteration, and reports each kind's rate and p99:
//
//	go test ./daemon -run '^$' -bench MixedWorkload -benchtime 1x
//
// Clients: 4 sending 500-event batches, 8 checking, 8 creating invoices, 8
// debiting across 1,000 funded customers (32 in all, as the issue's
// figures).
func BenchmarkMixedWorkload(b *testing.B) {
	for range b.N {
		b.StopTimer()
		bb := setup(b, func(c *daemon.Config) { c.RateLimits = false })
		c, key := bb.testClient()
		cus := meteredGrant(b, c)
		ctx := context.Background()
		const accounts = 1000
		for i := range accounts {
			if _, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000000000000", ExternalCustomerID: fmt.Sprintf("acct-%d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		batch := func(n int) string {
			var sb strings.Builder
			sb.WriteString(`{"events":[`)
			for j := range 500 {
				if j > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"event_name":"calls","external_customer_id":"u%d","idempotency_key":"k-%d-%d","properties":{"route":"/v1/things"}}`, j%100, n, j)
			}
			sb.WriteString(`]}`)
			return sb.String()
		}
		kinds := []struct {
			name    string
			clients int
			units   int
			req     func(n int) (string, string, string)
		}{
			{"ingest", 4, 500, func(n int) (string, string, string) { return "POST", "/v1/meter-events", batch(n) }},
			{"check", 8, 1, func(int) (string, string, string) { return "GET", "/v1/customers/" + cus + "/entitlements/api", "" }},
			{"invoice", 8, 1, func(int) (string, string, string) {
				return "POST", "/v1/invoices", `{"amount":"9000000","description":"Mixed"}`
			}},
			{"debit", 8, 1, func(n int) (string, string, string) {
				return "POST", "/v1/credit_debits", fmt.Sprintf(`{"amount":"1000","external_customer_id":"acct-%d"}`, n%accounts)
			}},
		}
		tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}
		hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		deadline := time.Now().Add(10 * time.Second)
		type result struct {
			lat   []time.Duration
			units int
			errs  int
		}
		results := make([]result, len(kinds))
		var mu sync.Mutex
		var wg sync.WaitGroup
		b.StartTimer()
		start := time.Now()
		for k, kind := range kinds {
			for w := range kind.clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine result
					for n := w * 1_000_000; time.Now().Before(deadline); n++ {
						method, path, body := kind.req(n)
						req, _ := http.NewRequest(method, bb.url+path, strings.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+key)
						t0 := time.Now()
						resp, err := hc.Do(req)
						if err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						mine.lat = append(mine.lat, time.Since(t0))
						if err != nil || resp.StatusCode >= 300 {
							mine.errs++
							continue
						}
						mine.units += kind.units
					}
					mu.Lock()
					results[k].lat = append(results[k].lat, mine.lat...)
					results[k].units += mine.units
					results[k].errs += mine.errs
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		tr.CloseIdleConnections()
		for k, kind := range kinds {
			r := results[k]
			if r.errs > 0 {
				b.Errorf("%s: %d errors", kind.name, r.errs)
			}
			slices.Sort(r.lat)
			b.ReportMetric(float64(r.units)/elapsed.Seconds(), kind.name+"/s")
			if len(r.lat) > 0 {
				b.ReportMetric(float64(r.lat[len(r.lat)*99/100].Microseconds())/1000, kind.name+"-p99-ms")
			}
		}
	}
}

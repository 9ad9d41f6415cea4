package daemon_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// Figures of the hosted checkout (issue 10), rerun with:
//
//	go test ./daemon -run '^$' -bench 'CheckoutPage' -benchtime 5000x
//	go test ./daemon -run '^$' -bench 'CheckoutPay' -benchtime 3000x
//
// BenchmarkCheckoutPage GETs checkout pages in an open loop at 500 req/s
// (b.N requests, each started on schedule whatever the latency of the
// others) and reports p50/p99: an open invoice, a paid one (its receipt
// reads the payment) and a metered tiered plan showing a subscription.
//
// BenchmarkCheckoutPay runs, with 32 clients each, b.N POST /v1/invoices,
// b.N payments of those invoices with POST /checkout/{inv}/pay (Accept:
// application/json) and b.N plan checkouts (POST /checkout/{price}/pay,
// each a new customer: a subscription and its first payment), alternating
// in rounds, and reports each rate and the ratios to the invoice rate.
//
// The machine is shared: compare figures of one run (the page's p99 with
// the static yardstick's), not across runs.

const pageRate = 500

func BenchmarkCheckoutPage(b *testing.B) {
	f := setupMoney(b, func(c *daemon.Config) { c.RateLimits = false })
	due := time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC)
	open, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "12340000", Description: "Annual licence", InvoiceNumber: "INV-1", DueAt: &due})
	if err != nil {
		b.Fatal(err)
	}
	paid, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "5000000", Description: "Paid one"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.c.Pay(f.ctx, paid.ID, client.CheckoutParams{Payer: rail.WalletSucceeds}); err != nil {
		b.Fatal(err)
	}
	m, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens", UnitLabel: "token"})
	if err != nil {
		b.Fatal(err)
	}
	pl := f.plan(client.PlanParams{Name: "Usage", Amount: "50000000", Interval: "month", UsageType: "metered", Meter: m.ID,
		PricingModel: []byte(`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":1000,"unitAmount":10},{"upTo":100000,"unitAmount":5},{"upTo":null,"unitAmount":1}]}`)})
	x := f.subscribe(pl.ID, rail.WalletSucceeds, "bench-customer")
	// The yardstick, in the same run: the open invoice's bytes from a bare
	// net/http handler, i.e. what this machine's load generator, loopback
	// and scheduler cost at this rate without tollgate.
	static := f.page("/checkout/" + open.ID).body
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, static)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	b.Run("static-yardstick", func(b *testing.B) { openLoopGET(b, "http://"+ln.Addr().String()+"/", pageRate) })
	for _, c := range []struct{ name, path string }{
		{"invoice-open", "/checkout/" + open.ID},
		{"invoice-paid", "/checkout/" + paid.ID},
		{"plan-subscribed", "/checkout/" + pl.ID + "?subscription=" + x.ID},
	} {
		b.Run(c.name, func(b *testing.B) { openLoopGET(b, f.url+c.path, pageRate) })
	}
}

// openLoopGET GETs u b.N times at rate per second, each request started on
// schedule, and reports the achieved rate and latency percentiles. Any
// answer other than 200 fails the run.
func openLoopGET(b *testing.B, u string, rate int) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: os.Getenv("BENCH_NO_GZIP") != ""}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	lat := make([]time.Duration, b.N)
	var failure atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for i := range b.N {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			resp, err := hc.Get(u)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			lat[i] = time.Since(s)
			if err != nil {
				failure.Store(err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	if err, _ := failure.Load().(error); err != nil {
		b.Fatal(err)
	}
	reportLatency(b, lat, elapsed)
}

func reportLatency(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkCheckoutPay(b *testing.B) {
	f := setupMoney(b, func(c *daemon.Config) { c.RateLimits = false })
	pl := f.plan(client.PlanParams{Name: "Bench weekly", Amount: "1000000", Interval: "week"})
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ids := make([]string, b.N)
	// The three kinds alternate in rounds, so a change in what else runs
	// on the machine weighs on each alike; each kind's rate is its calls
	// over the time spent on them.
	var tInvoices, tPays, tCheckouts time.Duration
	const rounds = 5
	b.ResetTimer()
	for r := range rounds {
		lo, hi := b.N*r/rounds, b.N*(r+1)/rounds
		tInvoices += closedLoop(b, lo, hi, func(i int) error {
			req, _ := http.NewRequest("POST", f.url+"/v1/invoices", strings.NewReader(`{"amount":"9000000","description":"Benchmark invoice"}`))
			req.Header.Set("Authorization", "Bearer "+f.key)
			req.Header.Set("Content-Type", "application/json")
			body, err := send(hc, req)
			if err == nil {
				ids[i], err = idOf(body)
			}
			return err
		})
		tPays += closedLoop(b, lo, hi, func(i int) error {
			_, err := send(hc, payRequest(f.url, ids[i], url.Values{"payer": {rail.WalletSucceeds}}))
			return err
		})
		tCheckouts += closedLoop(b, lo, hi, func(i int) error {
			_, err := send(hc, payRequest(f.url, pl.ID, url.Values{"payer": {rail.WalletSucceeds}, "external_customer_id": {fmt.Sprintf("bench-%d", i)}}))
			return err
		})
	}
	invoices := float64(b.N) / tInvoices.Seconds()
	pays := float64(b.N) / tPays.Seconds()
	checkouts := float64(b.N) / tCheckouts.Seconds()
	b.StopTimer()
	b.ReportMetric(invoices, "invoices/s")
	b.ReportMetric(pays, "pays/s")
	b.ReportMetric(checkouts, "checkouts/s")
	b.ReportMetric(pays/invoices, "pays/invoices")
	b.ReportMetric(checkouts/invoices, "checkouts/invoices")
	b.ReportMetric(0, "ns/op")
}

// payRequest is the checkout form of id, asking for JSON.
func payRequest(base, id string, form url.Values) *http.Request {
	req, _ := http.NewRequest("POST", base+"/checkout/"+id+"/pay", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req
}

// send does req and returns the body of a 2xx answer, else an error.
func send(hc *http.Client, req *http.Request) ([]byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return body, err
}

func idOf(body []byte) (string, error) {
	const k = `"id":"`
	i := strings.Index(string(body), k)
	if i < 0 {
		return "", fmt.Errorf("no id in %s", body)
	}
	rest := string(body[i+len(k):])
	return rest[:strings.IndexByte(rest, '"')], nil
}

// closedLoop calls do(lo..hi-1) from benchClients goroutines and returns
// the time it took; the first error fails the benchmark.
func closedLoop(b *testing.B, lo, hi int, do func(i int) error) time.Duration {
	var next atomic.Int64
	next.Store(int64(lo))
	var failure atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= hi {
					return
				}
				if err := do(i); err != nil {
					failure.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(t0)
	if err, _ := failure.Load().(error); err != nil {
		b.Fatal(err)
	}
	return took
}

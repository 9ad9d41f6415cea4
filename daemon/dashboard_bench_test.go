package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/users"
)

// Figures of the merchant dashboard and the customer portal, rerun with:
//
//	go test ./daemon -run '^$' -bench 'DashboardOverview' -benchtime 1200x -timeout 30m
//	TOLLGATE_BENCH_RATE=100 go test ./daemon -run '^$' -bench 'DashboardOverview' -benchtime 3000x -timeout 30m
//	go test ./daemon -run '^$' -bench 'PortalOverview' -benchtime 4000x -timeout 30m
//
// BenchmarkDashboardOverview stores, for one merchant, 100,000 payments
// spread over the last year (about 8,200 of them in the overview's 30-day
// chart) and 10,000 subscriptions (8,000 active, 1,000 past due, 1,000
// canceled), straight into the tables with set-based SQL; signs a
// dashboard user in; then GETs the overview (/dashboard) and the hosted
// checkout page of one of the merchant's open invoices (/checkout/{id}),
// b.N times each, in an open loop at TOLLGATE_BENCH_RATE requests a second
// (default 20; each request started on schedule whatever the latency of
// the others), alternating in four rounds. It reports each p50 and p99 and
// p99-ratio, the overview's p99 over the checkout page's.
//
// BenchmarkPortalOverview does the same for a customer with 5 subscriptions
// (made through checkout) and 1,000 payments (995 more stored with SQL):
// GET /portal/{token} against the checkout page, both at 200 requests a
// second.
//
// The machine is shared: compare the figures of one run (the ratio), not
// across runs.

func BenchmarkDashboardOverview(b *testing.B) {
	f := setupMoney(b, benchPages)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "12340000", Description: "Annual licence"})
	if err != nil {
		b.Fatal(err)
	}
	tpl := paidTemplate(b, f)
	seedPayments(b, f, tpl, 100_000-1, "", 365*24*time.Hour)
	_, err = f.db.Exec(`INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, amount, interval, usage_type, current_period_end)
		SELECT $1, 'test', 'sub_bench' || g, 'plan_bench' || (g % 20), 'cus_bench' || g,
			CASE WHEN g % 10 = 8 THEN 'past_due' WHEN g % 10 = 9 THEN 'canceled' ELSE 'active' END,
			1000000 + (g % 7) * 1000000, (ARRAY['month', 'year', 'week'])[1 + g % 3], 'licensed', now() + (g % 30) * interval '1 day'
		FROM generate_series(1, 10000) g`, f.m)
	if err != nil {
		b.Fatal(err)
	}
	analyze(b, f)
	cookie := dashSession(b, f)
	overview := func() *http.Request {
		req, _ := http.NewRequest("GET", f.url+"/dashboard", nil)
		req.Header.Set("Cookie", "tollgate_dashboard="+cookie)
		return req
	}
	checkout := func() *http.Request { req, _ := http.NewRequest("GET", f.url+"/checkout/"+inv.ID, nil); return req }
	comparePages(b, benchRate(20), "overview", overview, checkout)
}

func BenchmarkPortalOverview(b *testing.B) {
	f := setupMoney(b, benchPages)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "12340000", Description: "Annual licence"})
	if err != nil {
		b.Fatal(err)
	}
	var sub *client.Subscription
	for i := range 5 {
		pl := f.plan(client.PlanParams{Name: "Plan " + strconv.Itoa(i), Amount: strconv.Itoa(1_000_000 * (i + 1)), Interval: "month"})
		sub = f.subscribe(pl.ID, rail.WalletSucceeds, "portal-bench")
	}
	var tpl string
	if err := f.db.Get(&tpl, `SELECT id FROM payments WHERE subscription_id = $1`, sub.ID); err != nil {
		b.Fatal(err)
	}
	seedPayments(b, f, tpl, 1000-5, *sub.CustomerID, 365*24*time.Hour)
	analyze(b, f)
	ps, err := f.c.CreatePortalSession(f.ctx, client.PortalSessionParams{CustomerID: *sub.CustomerID})
	if err != nil {
		b.Fatal(err)
	}
	portal := func() *http.Request { req, _ := http.NewRequest("GET", ps.URL, nil); return req }
	checkout := func() *http.Request { req, _ := http.NewRequest("GET", f.url+"/checkout/"+inv.ID, nil); return req }
	comparePages(b, 200, "portal", portal, checkout)
}

// benchPages turns the rate limits off and lets the load generator, one
// address standing for many visitors, hold as many connections as an open
// loop needs when answers slow down.
func benchPages(c *daemon.Config) {
	c.RateLimits = false
	c.MaxConnectionsPerIP = 10_000
}

// benchRate is TOLLGATE_BENCH_RATE, or def.
func benchRate(def int) int {
	if n, err := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_RATE")); err == nil && n > 0 {
		return n
	}
	return def
}

// paidTemplate pays an invoice and returns its payment's id: the row the
// seeded payments copy.
func paidTemplate(b *testing.B, f *moneyFixture) string {
	paid, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "5000000", Description: "Paid one"})
	if err != nil {
		b.Fatal(err)
	}
	res, err := f.c.Pay(f.ctx, paid.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		b.Fatal(err)
	}
	return res.Payment.ID
}

// seedPayments stores n copies of payment tpl (for customerID when set),
// created evenly over the span before now.
func seedPayments(b *testing.B, f *moneyFixture, tpl string, n int, customerID string, span time.Duration) {
	_, err := f.db.Exec(`INSERT INTO payments (merchant_id, mode, id, invoice_id, subscription_id, customer_id, amount, amount_refunded,
			payer, payee, network, tx_hash, status, confirmed_at, period_start, period_end, lines, settlement_key, created_at)
		SELECT t.merchant_id, t.mode, 'pay_bench' || g, NULL, t.subscription_id, coalesce(nullif($2, ''), t.customer_id), t.amount + g % 1000, 0,
			t.payer, t.payee, t.network, NULL, t.status, t.confirmed_at, t.period_start, t.period_end, t.lines, 'bench:' || g,
			now() - g * ($4::bigint / $3) * interval '1 microsecond'
		FROM payments t, generate_series(1, $3) g WHERE t.id = $1`, tpl, customerID, n, span.Microseconds())
	if err != nil {
		b.Fatal(err)
	}
}

func analyze(b *testing.B, f *moneyFixture) {
	if _, err := f.db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

// dashSession signs a new dashboard user of f's merchant in and returns the
// session cookie's value.
func dashSession(b *testing.B, f *moneyFixture) string {
	ctx := context.Background()
	c, err := users.Create(ctx, f.db, audit.AdminActor(), f.m, "bench@example.com", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := users.CompleteSetup(ctx, f.db, audit.Actor{}, c.SetupToken, dashPassword, time.Now()); err != nil {
		b.Fatal(err)
	}
	s, err := users.SignIn(ctx, f.db, "127.0.0.1", users.SignInInput{Email: "bench@example.com", Password: dashPassword}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return s.Token
}

// comparePages GETs page and the checkout page b.N times each at rate per
// second, alternating in four rounds so both meet the same machine, and
// reports each one's p50 and p99 and the ratio of their p99s.
func comparePages(b *testing.B, rate int, name string, page, checkout func() *http.Request) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var pageLat, checkoutLat []time.Duration
	b.ResetTimer()
	for round := range 4 {
		n := b.N/4 + map[bool]int{true: b.N % 4, false: 0}[round == 3]
		checkoutLat = append(checkoutLat, openLoopRequests(b, hc, n, rate, checkout)...)
		pageLat = append(pageLat, openLoopRequests(b, hc, n, rate, page)...)
	}
	b.StopTimer()
	p := func(lat []time.Duration, q float64) float64 {
		slices.Sort(lat)
		return float64(lat[int(float64(len(lat)-1)*q)].Microseconds()) / 1000
	}
	b.ReportMetric(p(pageLat, 0.50), name+"-p50-ms")
	b.ReportMetric(p(pageLat, 0.99), name+"-p99-ms")
	b.ReportMetric(p(checkoutLat, 0.50), "checkout-p50-ms")
	b.ReportMetric(p(checkoutLat, 0.99), "checkout-p99-ms")
	b.ReportMetric(p(pageLat, 0.99)/p(checkoutLat, 0.99), "p99-ratio")
	b.ReportMetric(0, "ns/op")
}

// openLoopRequests sends n requests at rate per second, each started on schedule,
// and returns their latencies. Any answer other than 200 fails the run.
func openLoopRequests(b *testing.B, hc *http.Client, n, rate int, newReq func() *http.Request) []time.Duration {
	lat := make([]time.Duration, n)
	var failure atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			resp, err := hc.Do(newReq())
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s: status %d", resp.Request.URL.Path, resp.StatusCode)
				}
			}
			lat[i] = time.Since(s)
			if err != nil {
				failure.Store(err)
			}
		}()
	}
	wg.Wait()
	if err, _ := failure.Load().(error); err != nil {
		b.Fatal(err)
	}
	return lat
}

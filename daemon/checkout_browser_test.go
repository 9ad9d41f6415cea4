package daemon_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The hosted checkout pages in headless Chromium, driven over the DevTools
// protocol (chromedp, with the machine's own chromium): a customer pays an
// invoice with the keyboard and sees the receipt, a declined wallet shows
// its reason, a plan is subscribed to from a link carrying the merchant's
// customer id. Every page is audited in the browser (landmarks, one h1,
// labelled controls, text contrast, focus style, no horizontal scrolling at
// 375 px, no CSP violation, no request leaving the daemon) and captured at
// 375 and 1280 px into artifacts/screenshots (or $TOLLGATE_SCREENSHOT_DIR).

func TestCheckoutInChromium(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	f := setupMoney(t)
	ctx := context.Background()

	t.Run("invoice paid with the keyboard", func(t *testing.T) {
		due := time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC)
		inv, err := f.c.CreateInvoice(ctx, client.InvoiceParams{Amount: "12340000", Description: "Annual licence for the whole design team, including the on-call rotation",
			InvoiceNumber: "INV-2030-000077", Memo: "Thank you for your business", DueAt: &due})
		if err != nil {
			t.Fatal(err)
		}
		tb := newTab(t, browser, f.url)
		if st := tb.open(inv.CheckoutURL); st != 200 {
			t.Fatalf("status %d", st)
		}
		if got := tb.text("amount"); got != "12.34 USDC" {
			t.Fatalf("amount %q", got)
		}
		if got := tb.text("merchant"); got != "Acme Widgets" {
			t.Fatalf("merchant %q", got)
		}
		tb.audit("invoice")
		// The probe sees violations: an image from elsewhere is refused.
		tb.eval(`(() => { const i = document.createElement('img'); i.src = 'https://example.invalid/x.png'; document.body.append(i); return ''; })()`)
		if v := tb.eval(`new Promise(r => setTimeout(() => r(window.__csp.join(' ')), 100))`); !strings.Contains(v, "img-src") {
			t.Fatalf("the CSP probe saw no violation: %q", v)
		}

		tb.forget()

		// Tab to the first wallet: it shows a focus ring; Enter pays.
		if err := chromedp.Do(tb.ctx, phone(), chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tb.ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		if got := tb.eval(`document.activeElement.id`); got != "pay-"+rail.WalletSucceeds {
			t.Fatalf("first Tab focused %q", got)
		}
		if ring := tb.eval(`(s => s.outlineStyle + ' ' + s.outlineWidth)(getComputedStyle(document.activeElement))`); ring != "solid 3px" {
			t.Fatalf("focus ring %q", ring)
		}
		if st := tb.submit(chromedp.KeyEvent(kb.Enter)); st != 200 {
			t.Fatalf("after paying: status %d", st)
		}
		if loc := tb.location(); loc != inv.CheckoutURL {
			t.Fatalf("after paying at %s", loc)
		}
		pays, err := f.c.ListPayments(ctx, client.ListParams{})
		if err != nil || len(pays.Data) != 1 {
			t.Fatalf("payments %v %v", pays, err)
		}
		p := pays.Data[0]
		for id, want := range map[string]string{"status": "paid", "payment-id": p.ID, "tx-hash": *p.TxHash, "payer": rail.WalletSucceeds,
			"network": "test (simulated rail)", "amount-paid": "12.34 USDC"} {
			if got := tb.text(id); got != want {
				t.Fatalf("#%s %q, want %q", id, got, want)
			}
		}
		tb.audit("invoice-receipt")
	})

	t.Run("declined wallet shows its reason", func(t *testing.T) {
		inv, err := f.c.CreateInvoice(ctx, client.InvoiceParams{Amount: "500000", Description: "Coffee beans"})
		if err != nil {
			t.Fatal(err)
		}
		tb := newTab(t, browser, f.url)
		tb.open(inv.CheckoutURL)
		if st := tb.submit(chromedp.Click(chromedp.ID("pay-" + rail.WalletInsufficient))); st != 402 {
			t.Fatalf("status %d", st)
		}
		if got := tb.text("error-message"); got != "The wallet does not have enough USDC for this payment." {
			t.Fatalf("error %q", got)
		}
		if got := tb.text("status"); got != "open" {
			t.Fatalf("status %q", got)
		}
		tb.audit("invoice-declined")
		// The wallets are still there: the next one pays.
		if st := tb.submit(chromedp.Click(chromedp.ID("pay-" + rail.WalletSucceeds))); st != 200 || tb.text("status") != "paid" {
			t.Fatalf("retry: %d %s", st, tb.text("status"))
		}
	})

	t.Run("metered plan subscribed from a link", func(t *testing.T) {
		m, err := f.c.CreateMeter(ctx, client.MeterParams{Key: "api.calls", DisplayName: "API calls", UnitLabel: "call"})
		if err != nil {
			t.Fatal(err)
		}
		pl := f.plan(client.PlanParams{Name: "Scale", Description: "Pay for what you use, capped every month.", Amount: "250000000",
			Interval: "month", UsageType: "metered", Meter: m.ID,
			PricingModel: []byte(`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10000,"unitAmount":0},{"upTo":1000000,"unitAmount":100},{"upTo":null,"unitAmount":50}]}`)})
		tb := newTab(t, browser, f.url)
		if st := tb.open(pl.CheckoutURL + "?external_customer_id=" + url.QueryEscape("u_42")); st != 200 {
			t.Fatalf("status %d", st)
		}
		if got := tb.eval(`document.querySelectorAll('#pricing tbody tr').length + ''`); got != "3" {
			t.Fatalf("%s tier rows", got)
		}
		tb.audit("plan-metered")
		if st := tb.submit(chromedp.Click(chromedp.ID("pay-" + rail.WalletSucceeds))); st != 200 {
			t.Fatalf("subscribe: %d", st)
		}
		loc, err := url.Parse(tb.location())
		if err != nil {
			t.Fatal(err)
		}
		x := f.sub(loc.Query().Get("subscription"))
		if got := tb.text("subscription-status"); got != "active" || tb.text("subscription-id") != x.ID {
			t.Fatalf("subscription %q %q", got, tb.text("subscription-id"))
		}
		if got := tb.text("next-charge"); !strings.Contains(got, x.CurrentPeriodEnd.UTC().Format("2 Jan 2006")) {
			t.Fatalf("next charge %q", got)
		}
		cus, err := f.c.GetCustomer(ctx, *x.CustomerID)
		if err != nil || cus.ExternalCustomerID == nil || *cus.ExternalCustomerID != "u_42" {
			t.Fatalf("customer %v %v", cus, err)
		}
		tb.audit("plan-subscribed")
	})

	t.Run("licensed plan with a coupon", func(t *testing.T) {
		pl := f.plan(client.PlanParams{Name: "Team", Amount: "10000000", Interval: "month"})
		if _, err := f.c.CreateCoupon(ctx, client.CouponParams{PercentOff: 20, Duration: "repeating", DurationInPeriods: 3, Code: "LAUNCH"}); err != nil {
			t.Fatal(err)
		}
		tb := newTab(t, browser, f.url)
		tb.open(pl.CheckoutURL)
		// A code typed into the form reloads the page with it.
		if err := chromedp.Do(tb.ctx, chromedp.SetValue(chromedp.ID("coupon"), "nope")); err != nil {
			t.Fatal(err)
		}
		if st := tb.submit(chromedp.Click(chromedp.ID("apply-coupon"))); st != 200 || !strings.Contains(tb.text("coupon-error"), "cannot be used") {
			t.Fatalf("unknown coupon: %d %q", st, tb.text("coupon-error"))
		}
		if err := chromedp.Do(tb.ctx, chromedp.SetValue(chromedp.ID("coupon"), "launch")); err != nil {
			t.Fatal(err)
		}
		if st := tb.submit(chromedp.Click(chromedp.ID("apply-coupon"))); st != 200 {
			t.Fatalf("apply: %d", st)
		}
		if got := tb.text("coupon-applied"); got != "Coupon LAUNCH applied: 20% off the charges of the first 3 periods. You pay 8.00 USDC today." {
			t.Fatalf("applied %q", got)
		}
		tb.audit("plan-coupon")
		if st := tb.submit(chromedp.Click(chromedp.ID("pay-" + rail.WalletSucceeds))); st != 200 {
			t.Fatalf("subscribe: %d", st)
		}
		if got := tb.text("amount-paid"); got != "8.00 USDC" {
			t.Fatalf("amount paid %q", got)
		}
		loc, err := url.Parse(tb.location())
		if err != nil {
			t.Fatal(err)
		}
		if x := f.sub(loc.Query().Get("subscription")); x.Discount == nil || *x.Discount.Coupon.Code != "LAUNCH" {
			t.Fatalf("subscription %s", x.Raw)
		}
	})

	t.Run("live mode and unknown links", func(t *testing.T) {
		_, key := f.bundle.key(f.m, tenant.Live)
		inv, err := f.client(key).CreateInvoice(ctx, client.InvoiceParams{Amount: "1000000", Description: "Live order"})
		if err != nil {
			t.Fatal(err)
		}
		tb := newTab(t, browser, f.url)
		tb.open(inv.CheckoutURL)
		if n := tb.eval(`document.querySelectorAll('button,form').length + ''`); n != "0" {
			t.Fatalf("%s buttons or forms in live mode", n)
		}
		if !strings.Contains(tb.text("unavailable"), "not available yet") {
			t.Fatalf("notice %q", tb.text("unavailable"))
		}
		tb.audit("invoice-live")
		if st := tb.open(f.url + "/checkout/inv_doesnotexist"); st != 404 {
			t.Fatalf("status %d", st)
		}
		tb.audit("not-found")
	})
}

package daemon_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The dashboard's customer, subscription and invoice pages in headless
// Chromium: a merchant signs in and follows the links from the navigation
// to a customer with its usage chart, on to its subscription, then to a
// paid invoice; each page is checked in its text, has no CSP violation,
// does not scroll sideways at 360 px, and is captured at 1280 and 360 px.
func TestDashboardBrowserCustomers(t *testing.T) {
	f := setupDashLists(t)
	tb := newTab(t, startChromium(t), f.url)
	if st := tb.open(f.url + "/dashboard/sign-in"); st != 200 {
		t.Fatalf("sign-in page: %d", st)
	}
	tb.do(chromedp.SetValue("#email", "ops@example.com"), chromedp.SendKeys("#password", dashPassword))
	tb.click("#sign-in", "#revenue-chart")

	// A customer, from the navigation and the list.
	tb.click(`nav a[href="/dashboard/customers"]`, "#customers")
	tb.click(`#customers a[href="/dashboard/customers/`+f.aliceCus+`"]`, "#usage-heading")
	if got := tb.text("heading"); got != "Customer "+f.aliceCus {
		t.Fatalf("heading %q", got)
	}
	if got := tb.text("credit-balance"); got != "2.50 USDC" {
		t.Fatalf("credit balance %q", got)
	}
	if got := tb.eval(`document.querySelector("#usage-heading ~ section .usage-total").textContent`); got != "5" {
		t.Fatalf("usage total %q", got)
	}
	if got := tb.eval(`String(document.querySelectorAll("#usage-heading ~ section svg rect").length)`); got == "0" {
		t.Fatal("the usage chart has no bar")
	}
	if got := tb.eval(`document.getElementById("features").innerText`); !strings.Contains(got, "Single sign-on") {
		t.Fatalf("entitlements %q", got)
	}
	tb.shoot("customer")

	// Its subscription, from the customer's page.
	tb.click(`#customer-subscriptions a[href="/dashboard/subscriptions/`+f.alice.ID+`"]`, "#subscription-status")
	if got := tb.text("product"); !strings.HasPrefix(got, "Team") || !strings.Contains(got, "active") {
		t.Fatalf("product %q", got)
	}
	if got := tb.text("pending"); !strings.Contains(got, "Starter") {
		t.Fatalf("pending change %q", got)
	}
	if got := tb.text("discount"); !strings.HasPrefix(got, "20% off") {
		t.Fatalf("discount %q", got)
	}
	tb.shoot("subscription")

	// A paid invoice, from the list.
	tb.click(`nav a[href="/dashboard/invoices"]`, "#invoices")
	tb.click(`#invoices a[href="/dashboard/invoices/`+f.paid.ID+`"]`, "#invoice-status")
	if got := tb.text("invoice-status"); got != "paid" {
		t.Fatalf("invoice status %q", got)
	}
	if got := tb.text("checkout-link"); got != f.url+"/checkout/"+f.paid.ID {
		t.Fatalf("checkout link %q", got)
	}
	tb.shoot("invoice")
	for _, r := range tb.requests {
		if !strings.HasPrefix(r, f.url+"/") {
			t.Fatalf("a request left the daemon: %s", r)
		}
	}
}

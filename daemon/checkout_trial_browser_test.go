package daemon_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// A plan with a trial says so plainly on its checkout page; subscribing
// charges nothing and the receipt names the first charge's date. The pages
// pass the same audit as the other checkout pages.
func TestCheckoutTrialInChromium(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	f := setupMoney(t)
	days := 14
	pl := f.plan(client.PlanParams{Name: "Team", Description: "Everything your team needs.", Amount: "9000000", Interval: "month", TrialDays: &days})
	tb := newTab(t, browser, f.url)
	if st := tb.open(pl.CheckoutURL + "?external_customer_id=u_trial"); st != 200 {
		t.Fatalf("status %d", st)
	}
	if got := tb.text("trial"); got != "14-day free trial, then 9.00 USDC per month" {
		t.Fatalf("trial line %q", got)
	}
	if got := tb.text("usage-type"); !strings.HasPrefix(got, "Nothing is charged today.") {
		t.Fatalf("billing %q", got)
	}
	tb.audit("plan-trial")
	if st := tb.submit(chromedp.Click(chromedp.ID("pay-" + rail.WalletSucceeds))); st != 200 {
		t.Fatalf("subscribe: %d", st)
	}
	loc, err := url.Parse(tb.location())
	if err != nil {
		t.Fatal(err)
	}
	x := f.sub(loc.Query().Get("subscription"))
	if x.Status != "trialing" || tb.text("subscription-status") != "free trial" {
		t.Fatalf("subscription %s, page says %q", x.Status, tb.text("subscription-status"))
	}
	if got := tb.text("trial-notice"); !strings.Contains(got, "nothing was charged") {
		t.Fatalf("notice %q", got)
	}
	if got := tb.text("next-charge"); !strings.HasPrefix(got, "9.00 USDC on ") {
		t.Fatalf("next charge %q", got)
	}
	if pays, err := f.c.ListPayments(context.Background(), client.ListParams{}); err != nil || len(pays.Data) != 0 {
		t.Fatalf("payments %v %v", pays, err)
	}
	tb.audit("plan-trial-receipt")
}

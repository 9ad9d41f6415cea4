package daemon_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tollgatehq/tollgate/client"
)

// The customer portal in headless Chromium: a customer opens the link,
// switches plan after the preview, cancels and undoes it, applies a coupon
// code, reads usage and a receipt. Each step is checked in the page's text and against the API;
// every page is audited as the checkout's are and captured at 360 and
// 1280 px as portal-NAME-WIDTH.png (the portal guide shows them).
func TestPortalInChromium(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	p := setupPortal(t)
	if _, err := p.c.CreateMeter(p.ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls", Aggregation: "count", UnitLabel: "calls"}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := p.c.SendMeterEvent(p.ctx, client.MeterEventParams{EventName: "api_calls", ExternalCustomerID: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.c.GrantCredits(p.ctx, client.CreditGrantParams{ExternalCustomerID: "alice", Amount: "2500000", Reason: "Welcome credit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CreateCoupon(p.ctx, client.CouponParams{PercentOff: 20, Duration: "repeating", DurationInPeriods: 3, Code: "LAUNCH"}); err != nil {
		t.Fatal(err)
	}
	ps := p.session("alice", p.starter.ID, p.otherPlan.ID)
	tb := newTab(t, browser, p.url)
	tb.shots, tb.narrow = "portal", 360
	id := p.alice.ID

	// The overview.
	if st := tb.open(ps.URL); st != 200 {
		t.Fatalf("status %d", st)
	}
	if got := tb.text("merchant"); got != "Acme Widgets" {
		t.Fatalf("merchant %q", got)
	}
	if got := tb.text("credit-balance"); got != "2.50 USDC" {
		t.Fatalf("credit balance %q", got)
	}
	if got := tb.text("sub-" + id + "-name"); !strings.Contains(got, "Team") || !strings.Contains(got, "active") {
		t.Fatalf("subscription heading %q", got)
	}
	tb.audit("overview")

	// Switch plan: the preview, then the change.
	if _, err := chromedp.Run(tb.ctx, chromedp.SetValue(chromedp.ID("plan-"+id), p.starter.ID)); err != nil {
		t.Fatal(err)
	}
	if st := tb.submit(chromedp.Click(chromedp.ID("preview-" + id))); st != 200 {
		t.Fatalf("preview: status %d", st)
	}
	if got := tb.text("heading"); got != "Switch from Team to Starter" {
		t.Fatalf("preview heading %q", got)
	}
	if got := tb.text("next-charge"); !strings.HasPrefix(got, "5.00 USDC") {
		t.Fatalf("next charge %q", got)
	}
	tb.audit("change")
	if x := p.sub(id); x.PendingPlanID != nil {
		t.Fatal("the preview changed the subscription")
	}
	if st := tb.submit(chromedp.Click(chromedp.ID("confirm-change"))); st != 200 {
		t.Fatalf("confirm: status %d", st)
	}
	if got := tb.text("done-notice"); !strings.Contains(got, "will change at the end of the current period") {
		t.Fatalf("notice %q", got)
	}
	if x := p.sub(id); x.PendingPlanID == nil || *x.PendingPlanID != p.starter.ID {
		t.Fatalf("after the switch: %s", x.Raw)
	}

	// Cancel at the period's end, then undo it.
	if st := tb.submit(chromedp.Click(chromedp.ID("cancel-" + id))); st != 200 {
		t.Fatalf("cancel: status %d", st)
	}
	if got := tb.text("done-notice"); !strings.Contains(got, "will end at the end of the current period") {
		t.Fatalf("notice %q", got)
	}
	if x := p.sub(id); x.CancelAt == nil {
		t.Fatalf("after cancel: %s", x.Raw)
	}
	tb.audit("canceled")
	if st := tb.submit(chromedp.Click(chromedp.ID("undo-" + id))); st != 200 {
		t.Fatalf("undo: status %d", st)
	}
	if got := tb.text("done-notice"); !strings.Contains(got, "cancellation was undone") {
		t.Fatalf("notice %q", got)
	}
	if x := p.sub(id); x.CancelAt != nil || x.Status != "active" {
		t.Fatalf("after undo: %s", x.Raw)
	}

	// A coupon code: a mistyped one is refused in words, a good one
	// shows on the subscription.
	if _, err := chromedp.Run(tb.ctx, chromedp.SetValue(chromedp.ID("code-"+id), "LAUNCHH")); err != nil {
		t.Fatal(err)
	}
	if st := tb.submit(chromedp.Click(chromedp.ID("apply-coupon-" + id))); st != 400 {
		t.Fatalf("mistyped coupon: status %d", st)
	}
	if got := tb.text("coupon-error"); !strings.Contains(got, "cannot be used") {
		t.Fatalf("coupon error %q", got)
	}
	if _, err := chromedp.Run(tb.ctx, chromedp.SetValue(chromedp.ID("code-"+id), "launch")); err != nil {
		t.Fatal(err)
	}
	if st := tb.submit(chromedp.Click(chromedp.ID("apply-coupon-" + id))); st != 200 {
		t.Fatalf("coupon: status %d", st)
	}
	if got := tb.text("done-notice"); !strings.Contains(got, "coupon was applied") {
		t.Fatalf("notice %q", got)
	}
	if got := tb.text("discount-" + id); !strings.HasPrefix(got, "20% off (coupon LAUNCH), until ") {
		t.Fatalf("discount %q", got)
	}
	if x := p.sub(id); x.Discount == nil {
		t.Fatalf("after the coupon: %s", x.Raw)
	}

	// Usage, as a chart.
	if st := tb.open(ps.URL + "/usage"); st != 200 {
		t.Fatalf("usage: status %d", st)
	}
	if got := tb.eval(`document.querySelector('.usage-total').textContent`); got != "5" {
		t.Fatalf("usage total %q", got)
	}
	if n := tb.eval(`String(document.querySelectorAll('svg rect').length)`); n == "0" {
		t.Fatal("no bars in the chart")
	}
	tb.audit("usage")

	// A receipt, from the payments page.
	if st := tb.open(ps.URL + "/payments"); st != 200 {
		t.Fatalf("payments: status %d", st)
	}
	tb.audit("payments")
	if st := tb.submit(chromedp.Click(chromedp.CSS("table.payments a"))); st != 200 {
		t.Fatalf("receipt: status %d", st)
	}
	payID := tb.text("payment-id")
	pay, err := p.c.GetPayment(p.ctx, payID)
	if err != nil || pay.SubscriptionID == nil || *pay.SubscriptionID != id {
		t.Fatalf("the receipt's payment %s: %+v %v", payID, pay, err)
	}
	if got := tb.text("amount"); got != "12.00 USDC" {
		t.Fatalf("receipt amount %q", got)
	}
	tb.audit("receipt")
}

package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/users"
)

// A live refund in headless Chromium: the merchant asks for a refund on
// the payment's page, confirms it, and the browser wallet (ethers, in the
// page) signs the transfer authorization; the refund is sent and
// refund.succeeded fires once the chain confirms it.
func TestDashboardLiveRefundInChromium(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 2)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "8000000", Description: "Refundable"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := e.authorize(inv.ID, e.invoiceAuthorization(e.payer, inv.ID)); code != 202 {
		t.Fatalf("pay: %d %v", code, out)
	}
	e.until("paid", func() bool { return len(e.events("invoice.paid")) == 1 })
	paid, _ := e.api.GetInvoice(e.ctx, inv.ID)
	pay := *paid.PaymentID
	e.dashUser(t, e.merchantID, "live@example.com")
	s, err := users.SignIn(e.ctx, e.db, "127.0.0.1", users.SignInInput{Email: "live@example.com", Password: dashPassword}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := users.SetMode(e.ctx, e.db, s.Token, tenant.Live); err != nil {
		t.Fatal(err)
	}

	w := newBrowserWallet(t, e)
	httpOnly := true
	if err := chromedp.Do(w.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetCookie, network.SetCookieParams{Name: "tollgate_dashboard", Value: s.Token,
			URL: e.url + "/dashboard", Path: "/dashboard", HTTPOnly: &httpOnly})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	w.open(e.url+"/dashboard/payments/"+pay, "#refund")
	set := fmt.Sprintf(`window.tollgateWallet = {account: %q, key: %q, signer: "ethers"}; true`, addr(e.merchant).Hex(), hexutil.Encode(crypto.FromECDSA(e.merchant)))
	if err := chromedp.Do(w.ctx, chromedp.SendKeys(chromedp.CSS("#amount"), "3usdc"), chromedp.SendKeys(chromedp.CSS("#reason"), "damaged"),
		chromedp.Click(chromedp.CSS("#refund")), chromedp.WaitVisible(chromedp.CSS("#refund-sign"))); err != nil {
		t.Fatal(err)
	}
	if got := w.text("#refund-wallet"); got != addr(e.merchant).Hex() {
		t.Fatalf("the confirmation names %q, want the settlement wallet %s", got, addr(e.merchant).Hex())
	}
	w.screenshot("dashboard-live-refund-confirm-800.png")
	if _, err := chromedp.Run(w.ctx, chromedp.Evaluate[bool](set)); err != nil {
		t.Fatal(err)
	}
	before := e.usdc(addr(e.payer))
	if err := chromedp.Do(w.ctx, chromedp.Click(chromedp.CSS("#refund-sign"))); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-w.signed:
		if got != `{"signer":"ethers","primaryType":"TransferWithAuthorization"}` {
			t.Fatalf("the wallet signed %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the page never asked the wallet to sign; it says %q", w.text("#refund-status"))
	}
	if err := chromedp.Do(w.ctx, chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatal(err)
	}
	e.until("refund.succeeded", func() bool { return len(e.events("refund.succeeded")) == 1 })
	if got := e.usdc(addr(e.payer)); got != before+3_000_000 {
		t.Fatalf("payer got %d back, want 3000000", got-before)
	}
	w.open(e.url+"/dashboard/payments/"+pay, "#payment-status")
	if got, refunded := w.text("#payment-status"), w.text("#refunded"); got != "partially_refunded" || refunded != "3.00 USDC" {
		t.Fatalf("the page shows %q, %q refunded", got, refunded)
	}
}

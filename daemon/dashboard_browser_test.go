package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/users"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

// dashProvider is the EIP-1193 wallet of the dashboard's browser test,
// installed after the signers' bundle: it shares window.tollgateWallet's
// account and signs personal_sign with ethers.
const dashProvider = `(() => {
  window.ethereum = {
    request: async ({ method, params }) => {
      const w = window.tollgateWallet;
      if (!w) { throw new Error("no wallet configured"); }
      switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [w.account];
      case "personal_sign":
        if (params[1].toLowerCase() !== w.account.toLowerCase()) { throw new Error("asked to sign as " + params[1]); }
        return window.tollgatePersonal(w.key, params[0]);
      }
      throw new Error("unsupported method " + method);
    },
  };
})();`

// shoot saves the page at 1280 and 360 px as dashboard-NAME-WIDTH.png,
// after checking it has no CSP violation and does not scroll sideways.
func (tb *tab) shoot(name string) {
	tb.t.Helper()
	for _, width := range []int64{1280, 360} {
		if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			tb.t.Fatal(err)
		}
		if sw := tb.eval(`String(document.documentElement.scrollWidth)`); sw != fmt.Sprint(width) {
			tb.t.Errorf("%s at %d px scrolls sideways: %s px", name, width, sw)
		}
		shot, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			tb.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir(tb.t), fmt.Sprintf("dashboard-%s-%d.png", name, width)), shot, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
	if v := tb.eval(`window.__csp.join('\n')`); v != "" {
		tb.t.Fatalf("%s: CSP violations:\n%s", name, v)
	}
}

// click clicks sel and waits for next to show on the page it leads to.
func (tb *tab) click(sel, next string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(sel), chromedp.WaitVisible(next)); err != nil {
		body, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		tb.t.Fatalf("click %s, waiting for %s: %v\n%s", sel, next, err, body)
	}
}

// do runs actions in the tab.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	for _, a := range actions {
		if err := chromedp.Do(tb.ctx, a); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// A merchant in the dashboard, in a real browser with a browser wallet:
// signs in, makes a key and uses it, adds an endpoint and sees a delivery,
// resends the event, changes the wallet by signing, refunds a payment, and
// finds each in the audit log.
func TestDashboardBrowser(t *testing.T) {
	b := setup(t, insecureHooks)
	ctx := context.Background()
	m := b.merchant("Acme Widgets")
	c, err := users.Create(ctx, b.db, audit.AdminActor(), m, "ops@example.com", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rc := webhookstest.NewReceiver(t, nil)
	tb := newTab(t, startChromium(t), b.url)
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: walletBundle(t) + "\n" + dashProvider}); err != nil {
		t.Fatal(err)
	}
	wkey, _ := crypto.GenerateKey()
	account := crypto.PubkeyToAddress(wkey.PublicKey).Hex()

	// Set up and sign in.
	if st := tb.open(b.url + "/dashboard/setup/" + c.SetupToken); st != 200 {
		t.Fatalf("setup page: %d", st)
	}
	tb.shoot("setup")
	tb.do(chromedp.SendKeys("#password", dashPassword), chromedp.SendKeys("#confirm", dashPassword))
	tb.click("#set-password", "#sign-in")
	tb.do(chromedp.SetValue("#email", "ops@example.com"), chromedp.SendKeys("#password", dashPassword))
	tb.shoot("sign-in")
	tb.click("#sign-in", "#revenue-chart")
	if got := tb.text("heading"); got != "Overview" {
		t.Fatalf("after sign-in: %q", got)
	}

	// A key, used against /v1: an invoice paid, whose payment is refunded
	// below.
	tb.open(b.url + "/dashboard/developers")
	tb.click("#create-key", "#new-key")
	key := tb.text("new-key")
	tb.shoot("new-key")
	kc := client.New(b.url, key, client.WithMaxRetries(0))

	// An endpoint, then an event delivered to it.
	tb.do(chromedp.SendKeys("#url", rc.URL))
	tb.click("#add-endpoint", "#new-secret")
	if !strings.HasPrefix(tb.text("new-secret"), "whsec_") {
		t.Fatal("no secret shown")
	}
	inv, err := kc.CreateInvoice(ctx, client.InvoiceParams{Amount: "10000000", Description: "Widgets"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := kc.Pay(ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		t.Fatal(err)
	}
	webhookstest.Eventually(t, 15*time.Second, "a delivery", func() bool { return rc.Count() >= 1 })
	tb.open(b.url + "/dashboard")
	if got := tb.text("revenue-total"); got != "10.00 USDC" {
		t.Fatalf("overview revenue %q", got)
	}
	tb.shoot("overview")
	evs, err := kc.ListEvents(ctx, client.ListParams{})
	if err != nil || len(evs.Data) == 0 {
		t.Fatal(err)
	}
	evID := evs.Data[0].ID
	webhookstest.Settled(t, b.db, evID, 15*time.Second)
	tb.open(b.url + "/dashboard/events/" + evID)
	if !strings.Contains(tb.eval(`document.body.innerText`), "succeeded") {
		t.Fatal("the event page shows no delivery")
	}
	before := rc.Count()
	tb.click("#resend", "#done")
	webhookstest.Eventually(t, 15*time.Second, "the resent delivery", func() bool { return rc.Count() > before })
	tb.shoot("event")

	// The wallet, by the browser wallet's signature.
	tb.open(b.url + "/dashboard/wallet")
	set := fmt.Sprintf(`window.tollgateWallet = {account: %q, key: %q}; true`, account, hexutil.Encode(crypto.FromECDSA(wkey)))
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](set)); err != nil {
		t.Fatal(err)
	}
	tb.click("#connect-wallet", "#done")
	if got := tb.text("wallet-address"); got != account {
		t.Fatalf("wallet %q, want %s", got, account)
	}
	tb.shoot("wallet")

	// A refund, confirmed first.
	tb.open(b.url + "/dashboard/payments/" + res.Payment.ID)
	tb.do(chromedp.SendKeys("#amount", "2.5usdc"))
	tb.click("#refund", "#refund-yes")
	tb.shoot("refund-confirm")
	tb.click("#refund-yes", "#done")
	if got := tb.text("payment-status"); got != "partially_refunded" {
		t.Fatalf("payment status %q", got)
	}

	tb.open(b.url + "/dashboard/audit")
	body := tb.eval(`document.getElementById("audit").innerText`)
	for _, want := range []string{users.ActionSignIn, audit.KeyCreate, audit.EndpointCreate, audit.DeliveryRetry, audit.WalletSet, audit.RefundCreate} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, body)
		}
	}
	tb.shoot("audit")
	for _, r := range tb.requests {
		if !strings.HasPrefix(r, b.url+"/") {
			t.Fatalf("a request left the daemon: %s", r)
		}
	}
}

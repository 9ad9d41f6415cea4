package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain"
)

// testProvider is the EIP-1193 wallet the test installs in the page
// through the DevTools protocol (so the page's CSP does not apply to it):
// it shares one account on the test chain and hands eth_signTypedData_v4
// to the test over a binding, which signs with the payer's key.
const testProvider = `(() => {
  const account = %q;
  window.ethereum = {
    isTollgateTest: true,
    request: async ({ method, params }) => {
      switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account];
      case "eth_chainId":
        return %q;
      case "eth_signTypedData_v4":
        return window.tollgateSign({ account: params[0], typed: params[1] });
      }
      throw new Error("unsupported method " + method);
    },
  };
})();`

// TestLiveCheckoutInChromium: the live checkout page in headless Chromium
// with a wallet: open, connect, sign, and see the receipt once the payment
// is confirmed on chain.
func TestLiveCheckoutInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	e := newLiveEnv(t, 1)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "4200000", Description: "Paid from a browser wallet"})
	if err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(800, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	signed := make(chan string, 4)
	sign := func(_ context.Context, req struct {
		Account string `json:"account"`
		Typed   string `json:"typed"`
	}) (string, error) {
		var td apitypes.TypedData
		if err := json.Unmarshal([]byte(req.Typed), &td); err != nil {
			return "", err
		}
		if !strings.EqualFold(req.Account, addr(e.payer).Hex()) {
			return "", fmt.Errorf("asked to sign as %s", req.Account)
		}
		sig, err := chain.SignTypedData(e.payer, td)
		if err != nil {
			return "", err
		}
		signed <- td.PrimaryType
		return hexutil.Encode(sig), nil
	}
	script := fmt.Sprintf(testProvider, addr(e.payer).Hex(), hexutil.EncodeBig(e.chainID))
	if err := chromedp.Do(ctx,
		chromedp.ExposeFunc("tollgateSign", sign),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}),
		chromedp.Navigate(inv.CheckoutURL),
		chromedp.WaitVisible(chromedp.CSS("#live-pay")),
	); err != nil {
		t.Fatal(err)
	}
	before, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "checkout-live-wallet.png"), before, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#live-pay"))); err != nil {
		t.Fatal(err)
	}
	select {
	case what := <-signed:
		if what != "TransferWithAuthorization" {
			t.Fatalf("the wallet was asked to sign %s", what)
		}
	case <-time.After(30 * time.Second):
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live-status").textContent`))
		t.Fatalf("the page never asked the wallet to sign; it says %q", status)
	}
	// The chain moves on; the page reloads itself until the receipt shows.
	var paymentID string
	deadline := time.Now().Add(60 * time.Second)
	for paymentID == "" {
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
			t.Fatalf("no receipt after 60s:\n%s", body)
		}
		e.step()
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("payment-id") || {}).textContent || ""`)); err == nil {
			paymentID = strings.TrimSpace(got)
		}
	}
	paid, err := e.api.GetInvoice(e.ctx, inv.ID)
	if err != nil || paid.Status != "paid" || paid.PaymentID == nil || *paid.PaymentID != paymentID {
		t.Fatalf("invoice %+v %v; the page shows payment %q", paid, err, paymentID)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "checkout-live-receipt.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// testProvider is the EIP-1193 wallet the test installs in every page
// through the DevTools protocol (so the page's CSP does not apply to it),
// after the signers' bundle: it shares the account window.tollgateWallet
// names and signs eth_signTypedData_v4 in the page with that wallet's
// signer, ethers or viem, as a browser wallet built on either would. It
// tells the test what it signed over a binding.
const testProvider = `(() => {
  window.ethereum = {
    isTollgateTest: true,
    request: async ({ method, params }) => {
      const w = window.tollgateWallet;
      if (!w) { throw new Error("no wallet configured"); }
      switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [w.account];
      case "eth_chainId":
        return %q;
      case "eth_signTypedData_v4": {
        if (params[0].toLowerCase() !== w.account.toLowerCase()) { throw new Error("asked to sign as " + params[0]); }
        const typed = JSON.parse(params[1]);
        try {
          const sig = await window.tollgateSigners[w.signer](w.key, typed);
          await window.tollgateSigned(JSON.stringify({ signer: w.signer, primaryType: typed.primaryType }));
          return sig;
        } catch (e) {
          await window.tollgateSigned(JSON.stringify({ signer: w.signer, error: String((e && e.message) || e) }));
          throw e;
        }
      }
      }
      throw new Error("unsupported method " + method);
    },
  };
})();`

// walletBundle is the signers (daemon/testdata/wallet) bundled for the page
// by esbuild.
func walletBundle(t *testing.T) string {
	t.Helper()
	dir := chaintest.WalletDir(t, "testdata/wallet")
	out, err := exec.Command("node", filepath.Join(dir, "bundle.mjs")).Output()
	if err != nil {
		t.Fatalf("bundling the wallet: %v", err)
	}
	return string(out)
}

// browserWallet drives live pages in headless Chromium with the injected
// wallet.
type browserWallet struct {
	t      *testing.T
	e      *liveEnv
	ctx    context.Context
	signed chan string
}

func newBrowserWallet(t *testing.T, e *liveEnv) *browserWallet {
	bin := chromium(t)
	script := walletBundle(t) + "\n" + fmt.Sprintf(testProvider, hexutil.EncodeBig(e.chainID))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(800, 1000))...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(cancelTimeout)
	w := &browserWallet{t: t, e: e, ctx: ctx, signed: make(chan string, 16)}
	signed := func(_ context.Context, what string) (string, error) {
		w.signed <- what
		return "", nil
	}
	if err := chromedp.Do(ctx,
		chromedp.ExposeFunc("tollgateSigned", signed),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}),
	); err != nil {
		t.Fatal(err)
	}
	return w
}

// open loads a page and waits for sel.
func (w *browserWallet) open(url, sel string) {
	w.t.Helper()
	if err := chromedp.Do(w.ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		w.t.Fatalf("open %s: %v", url, err)
	}
}

// text is the text of sel ("" when there is none).
func (w *browserWallet) text(sel string) string {
	got, _ := chromedp.Run(w.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
	return strings.TrimSpace(got)
}

// press clicks #live-pay with key's account and signer, and checks that
// the wallet signed exactly want (primary types, in order) with it.
func (w *browserWallet) press(key *ecdsa.PrivateKey, signer string, want ...string) {
	w.t.Helper()
	account := crypto.PubkeyToAddress(key.PublicKey).Hex()
	set := fmt.Sprintf(`window.tollgateWallet = {account: %q, key: %q, signer: %q}; true`, account, hexutil.Encode(crypto.FromECDSA(key)), signer)
	if _, err := chromedp.Run(w.ctx, chromedp.Evaluate[bool](set)); err != nil {
		w.t.Fatal(err)
	}
	if err := chromedp.Do(w.ctx, chromedp.Click(chromedp.CSS("#live-pay"))); err != nil {
		w.t.Fatal(err)
	}
	for _, typ := range want {
		select {
		case got := <-w.signed:
			if wantJSON := fmt.Sprintf(`{"signer":%q,"primaryType":%q}`, signer, typ); got != wantJSON {
				w.t.Fatalf("the wallet signed %s, want %s", got, wantJSON)
			}
		case <-time.After(30 * time.Second):
			w.t.Fatalf("the page never asked the wallet to sign %s; it says %q", typ, w.text("#live-status"))
		}
	}
}

// until steps the chain (a block, the settlement job) until the page
// shows sel, reloading itself as it does while a payment is pending.
func (w *browserWallet) until(what, sel string) string {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got := w.text(sel); got != "" {
			return got
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(w.ctx, chromedp.Evaluate[string](`document.querySelector("main").outerHTML`))
			w.t.Fatalf("%s: %s never showed:\n%s", what, sel, body)
		}
		w.e.step()
	}
}

func (w *browserWallet) screenshot(name string) {
	w.t.Helper()
	shot, err := chromedp.Run(w.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(w.t), name), shot, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// TestLiveCheckoutInChromium: live pages in headless Chromium with a
// wallet that signs in the page with ethers or viem, bundled from npm:
// an invoice paid; a plan whose page shows the permit's bound and period
// before anything is signed, subscribed to twice (viem, ethers); and both
// subscriptions stopped by their customers, without gas, one from its own
// revoke page (ethers), one from the plan's (viem).
func TestLiveCheckoutInChromium(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	w := newBrowserWallet(t, e)
	alice, bob := newKey(t), newKey(t)
	e.mint(addr(alice), 100_000_000)
	e.mint(addr(bob), 100_000_000)

	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "4200000", Description: "Paid from a browser wallet"})
	if err != nil {
		t.Fatal(err)
	}
	w.open(inv.CheckoutURL, "#live-pay")
	w.screenshot("checkout-live-wallet.png")
	w.press(e.payer, "ethers", "TransferWithAuthorization")
	paymentID := w.until("the invoice's receipt", "#payment-id")
	if paid, err := e.api.GetInvoice(e.ctx, inv.ID); err != nil || paid.Status != "paid" || paid.PaymentID == nil || *paid.PaymentID != paymentID {
		t.Fatalf("invoice %+v %v; the page shows payment %q", paid, err, paymentID)
	}
	w.screenshot("checkout-live-receipt.png")

	plan, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro weekly", Amount: "5000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		key    *ecdsa.PrivateKey
		signer string
	}{{alice, "viem"}, {bob, "ethers"}} {
		w.open(plan.CheckoutURL, "#live-pay")
		if total, steps := w.text("#permit-total"), w.text("#live-steps"); total != "60.00 USDC" ||
			!strings.Contains(steps, "at most 5.00 USDC per week") || !strings.Contains(steps, "12 periods") {
			t.Fatalf("before signing, the plan page says %q / %q", total, steps)
		}
		if s.signer == "viem" {
			w.screenshot("checkout-live-plan.png")
		}
		w.press(s.key, s.signer, "Plan", "Permit")
		if got := w.until(s.signer+": the subscription's receipt", "#subscription-status"); got != "active" {
			t.Fatalf("%s: the receipt says %q", s.signer, got)
		}
	}
	subA, subB := e.subscriptionPaidBy(addr(alice)), e.subscriptionPaidBy(addr(bob))

	// Alice stops paying from her subscription's page (ethers).
	w.open(e.url+"/checkout/"+subA, "#revoke-link")
	if left := w.text("#permit-left"); !strings.Contains(left, "55.00 USDC") {
		t.Fatalf("the subscription page says %q", left)
	}
	w.open(e.url+"/checkout/"+subA+"/revoke", "#live-pay")
	w.screenshot("checkout-live-revoke.png")
	w.press(alice, "ethers", "Revoke")
	w.until("alice's revocation", "#live-ended")
	// Bob from the plan's address (viem): the page finds his subscription
	// by the wallet he connects.
	w.open(e.url+"/checkout/"+plan.ID+"/revoke", "#live-pay")
	w.press(bob, "viem", "Revoke")
	w.until("bob's revocation", "#live-ended")
	for _, id := range []string{subA, subB} {
		if x, err := e.api.GetSubscription(e.ctx, id); err != nil || x.Status != "revoked" {
			t.Fatalf("%s after the revocation: %+v %v", id, x, err)
		}
	}
	if e.eth(addr(alice)).Sign() != 0 || e.eth(addr(bob)).Sign() != 0 || e.eth(addr(e.payer)).Sign() != 0 {
		t.Fatal("a customer spent gas")
	}
}

// TestLivePagesWithoutMerchantWallet: a live invoice or plan of a merchant
// with no settlement wallet says plainly, before anything is pressed, that
// the merchant cannot be paid yet: no wallet button, no script, no
// operator instruction; the authorization endpoint says the same.
func TestLivePagesWithoutMerchantWallet(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	m := e.bundle.merchant("walletless shop")
	_, key := e.bundle.key(m, "live")
	api := e.bundle.client(key)
	inv, err := api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "1000000", Description: "Nowhere to pay"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := api.CreatePlan(e.ctx, client.PlanParams{Name: "Nowhere", Amount: "1000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{inv.CheckoutURL, plan.CheckoutURL} {
		path := strings.TrimPrefix(u, e.url)
		code, _, body := e.raw("GET", path, "", "")
		if code != 200 || !strings.Contains(body, `id="live-unavailable"`) || !strings.Contains(body, "cannot be paid yet") ||
			strings.Contains(body, `id="live-pay"`) || strings.Contains(body, "<script") || strings.Contains(body, "admin wallet") {
			t.Fatalf("%s: %d\n%s", path, code, body)
		}
		st, _, out := e.raw("GET", path+"/authorization?payer="+addr(e.payer).Hex(), "", "")
		if st != 402 || !strings.Contains(out, "cannot be paid yet") || strings.Contains(out, "admin wallet") {
			t.Fatalf("%s terms: %d %s", path, st, out)
		}
	}
}

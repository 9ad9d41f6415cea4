package daemon_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain"
)

// TestLiveChangeInChromium: the portal's switch above the authorization,
// in headless Chromium with the test wallet: preview, confirm, the
// re-authorization page, the wallet signs the new plan and permit (viem),
// and the page follows the activation to the changed subscription.
func TestLiveChangeInChromium(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	w := newBrowserWallet(t, e)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	ps, err := e.api.CreatePortalSession(e.ctx, client.PortalSessionParams{CustomerID: *sub.CustomerID, Plans: []string{pro.ID}})
	if err != nil {
		t.Fatal(err)
	}
	w.open(ps.URL, "#preview-"+sub.ID)
	if err := chromedp.Do(w.ctx, chromedp.SetValue(chromedp.ID("plan-"+sub.ID), pro.ID), chromedp.SetValue(chromedp.ID("at-"+sub.ID), "now"),
		chromedp.Click(chromedp.ID("preview-"+sub.ID)), chromedp.WaitVisible(chromedp.ID("confirm-change")),
		chromedp.Click(chromedp.ID("confirm-change")), chromedp.WaitVisible(chromedp.ID("live-pay"))); err != nil {
		t.Fatal(err)
	}
	if got := w.text("#live-pay"); got != "Authorize the new plan from my wallet" {
		t.Fatalf("the re-authorization page's button says %q", got)
	}
	if main := w.text("main"); !strings.Contains(main, "USDC is due now for the rest of the current period") {
		t.Fatalf("the page does not say what is due now:\n%s", main)
	}
	if total := w.text("#permit-total"); total != "96.00 USDC" {
		t.Fatalf("the page's permit: %q", total)
	}
	w.screenshot("checkout-live-change.png")
	w.press(e.payer, "viem", "Plan", "Permit")
	if got := w.until("the changed subscription", "#subscription-plan"); got != pro.ID {
		t.Fatalf("the page shows plan %q", got)
	}
	if got := w.text("#charged-now"); !strings.HasSuffix(got, " USDC") || strings.HasPrefix(got, "0.00") {
		t.Fatalf("the page says %q was charged now", got)
	}
	w.screenshot("checkout-live-changed.png")
	x, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || x.PlanID != pro.ID || len(e.events("subscription.updated")) != 1 {
		t.Fatalf("after the change: %+v %v", x, err)
	}
}

// TestLiveChangeRevertedChangesNothing: the payer's funds leave the wallet
// after the re-authorization was submitted and before it is mined (a
// transfer with a higher tip lands first), so the activation reverts on
// chain: the subscription keeps its plan and authorization, nothing is
// recorded, the page says why, and the same signature posted again is
// refused with that reason.
func TestLiveChangeRevertedChangesNothing(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	page := e.reauthorization(sub.ID, pro.ID, "now")
	_, terms := e.changeTerms(page, e.payer)
	body := e.signedPlan(e.payer, terms)
	code, out := e.postChange(page, body)
	if code != 202 {
		t.Fatalf("change: %d %v", code, out)
	}
	receipt := out["receipt_url"].(string)
	e.drainPayer()
	var html string
	e.until("the failed activation on the page", func() bool {
		_, _, html = e.raw("GET", receipt, "", "")
		return contains(html, `id="live-error"`)
	})
	if !contains(html, "The last attempt failed") || !contains(html, `id="live-pay"`) {
		t.Fatalf("page after the revert:\n%s", html)
	}
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != basic.ID || *got.Amount != "5000000" || got.PendingPlanID != nil {
		t.Fatalf("after the revert: %+v %v", got, err)
	}
	if n := len(e.events("subscription.updated")); n != 0 {
		t.Fatalf("%d subscription.updated after a revert", n)
	}
	code, again := e.postChange(page, body)
	t.Logf("posted again: %d %s", code, errorMessage(again))
	if code != 402 || !contains(errorMessage(again), "nothing changed") {
		t.Fatalf("the reverted signature again: %d %v", code, again)
	}
	if _, err := e.api.ChangeSubscription(e.ctx, sub.ID, client.ChangeParams{Plan: pro.ID, At: "now"}); err == nil {
		t.Fatal("the API changed the plan after a reverted authorization")
	}
}

// drainPayer moves the payer's whole USDC balance away with a gasless
// transfer authorization, sent with a tip above the relayer's so it is
// mined first in the next block.
func (e *liveEnv) drainPayer() {
	e.t.Helper()
	d, err := e.token.Domain(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	a := chain.TransferAuthorization{From: addr(e.payer), To: addr(e.deployer), Value: big.NewInt(e.usdc(addr(e.payer))),
		ValidAfter: new(big.Int), ValidBefore: new(big.Int).SetUint64(e.head().Time + 3600), Nonce: common.Hash{1, 2, 3}}
	if a.Signature, err = chain.SignTypedData(e.payer, chain.TransferTypedData(d, a)); err != nil {
		e.t.Fatal(err)
	}
	nonce, err := e.c.PendingNonceAt(e.ctx, addr(e.deployer))
	if err != nil {
		e.t.Fatal(err)
	}
	tip := big.NewInt(1000e9)
	to := e.token.Address
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(e.head().BaseFee, big.NewInt(3)), tip), Gas: 500_000, To: &to,
		Data: e.token.TransferCall(a).Data}), types.LatestSignerForChainID(e.chainID), e.deployer)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
}

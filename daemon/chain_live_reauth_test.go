package daemon_test

import (
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// liveSubscribe subscribes the env's payer to plan from its wallet and
// returns the subscription once recorded.
func (e *liveEnv) liveSubscribe(planID string) client.Subscription {
	e.t.Helper()
	code, out := e.authorize(planID, e.signedPlan(e.payer, e.terms(planID, addr(e.payer))))
	if code != 202 {
		e.t.Fatalf("activation: %d %v", code, out)
	}
	e.until("subscription.active", func() bool { return len(e.events("subscription.active")) == 1 })
	subs, err := e.api.ListSubscriptions(e.ctx, client.ListParams{})
	if err != nil || len(subs.Data) != 1 {
		e.t.Fatalf("subscriptions %+v %v", subs, err)
	}
	return subs.Data[0]
}

// signedPlan is the body a page posts: terms' plan and permit signed by k.
func (e *liveEnv) signedPlan(k *ecdsa.PrivateKey, terms map[string]json.RawMessage) string {
	e.t.Helper()
	planTD, planSig := signTerms(e.t, k, terms["plan"])
	permitTD, permitSig := signTerms(e.t, k, terms["permit"])
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": planSig,
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": permitSig}})
	return string(b)
}

// reauthorization asks for a change above the authorization and returns
// the path of its page (the checkout_url of authorization_required).
func (e *liveEnv) reauthorization(subID, planID, at string) string {
	e.t.Helper()
	_, err := e.api.ChangeSubscription(e.ctx, subID, client.ChangeParams{Plan: planID, At: at})
	ae := apiErr(e.t, err, 409, "authorization_required")
	u, perr := url.Parse(ae.CheckoutURL)
	if perr != nil || !strings.HasPrefix(u.Path, "/checkout/"+subID) || u.Query().Get("plan") != planID || u.Query().Get("at") != at {
		e.t.Fatalf("checkout_url %q", ae.CheckoutURL)
	}
	return u.RequestURI()
}

// changeTerms asks the re-authorization's terms for payer.
func (e *liveEnv) changeTerms(page string, payer *ecdsa.PrivateKey) (int, map[string]json.RawMessage) {
	e.t.Helper()
	u, _ := url.Parse(page)
	q := u.Query()
	q.Set("payer", addr(payer).Hex())
	st, _, body := e.raw("GET", u.Path+"/authorization?"+q.Encode(), "", "")
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		e.t.Fatalf("terms: %d %s", st, body)
	}
	return st, out
}

// postChange posts a signed body to the re-authorization's endpoint.
func (e *liveEnv) postChange(page, body string) (int, map[string]any) {
	e.t.Helper()
	u, _ := url.Parse(page)
	st, _, out := e.raw("POST", u.Path+"/authorization?"+u.RawQuery, "", body)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("POST change authorization: %d %s", st, out)
	}
	return st, m
}

func (e *liveEnv) twoPlans() (client.Plan, client.Plan) {
	e.t.Helper()
	one := 1
	for _, k := range []string{"basic", "pro"} {
		if _, err := e.api.CreateFeature(e.ctx, client.FeatureParams{Key: k, Name: k}); err != nil {
			e.t.Fatal(err)
		}
	}
	basic, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Basic", Amount: "5000000", Interval: "custom", IntervalDays: &one,
		Features: []client.PlanFeature{{FeatureKey: "basic"}}})
	if err != nil {
		e.t.Fatal(err)
	}
	pro, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro", Amount: "8000000", Interval: "custom", IntervalDays: &one,
		Features: []client.PlanFeature{{FeatureKey: "pro"}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return *basic, *pro
}

// renew moves the chain and the billing engine a period on and waits for
// the renewal.
func (e *liveEnv) renew(n int) {
	e.t.Helper()
	chaintest.AdjustTime(e.t, e.sim, 24*time.Hour+time.Minute)
	e.sim.Commit()
	now := time.Now().Add(24*time.Hour + 2*time.Minute)
	e.until("subscription.renewed", func() bool {
		if err := e.d.Jobs().Drain(e.ctx, "subscription-billing", now); err != nil {
			e.t.Fatal(err)
		}
		now = now.Add(20 * time.Second)
		return len(e.events("subscription.renewed")) == n
	})
}

// TestLiveChangeNowAboveAuthorization: a live upgrade now above what the
// payer authorized on chain. The API answers authorization_required with
// the page; another wallet gets no terms, and a plan signed by the wrong
// key is refused before any gas is spent. The payer's signed new plan is
// activated with the proration as its first charge; posting it twice, and
// a second signed plan meanwhile, charge once. The change is made when the
// chain confirms it (subscription.updated once, the features switch), a
// replay afterwards answers the subscription, and the next renewal charges
// the new amount on the new plan.
func TestLiveChangeNowAboveAuthorization(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("first period: merchant has %d", got)
	}
	page := e.reauthorization(sub.ID, pro.ID, "now")
	if _, _, html := e.raw("GET", page, "", ""); !contains(html, `id="live-pay"`) || !contains(html, "Authorize the new plan from my wallet") ||
		!contains(html, `data-authorization-url="/checkout/`+sub.ID+`/authorization?at=now&amp;plan=`+pro.ID+`"`) {
		t.Fatalf("page:\n%s", html)
	}

	stranger := newKey(t)
	if code, out := e.changeTerms(page, stranger); code != 400 || !contains(string(out["error"]), "payer") {
		t.Fatalf("terms for another wallet: %d %s", code, out["error"])
	}
	code, terms := e.changeTerms(page, e.payer)
	if code != 200 || string(terms["kind"]) != `"plan"` {
		t.Fatalf("terms: %d %v", code, terms)
	}
	nonce := e.relayerNonce()
	if code, out := e.postChange(page, e.signedPlan(stranger, terms)); code != 402 || !contains(errorMessage(out), "invalid_signature") {
		t.Fatalf("signed by another key: %d %v", code, out)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("a wrong signature cost gas")
	}

	body := e.signedPlan(e.payer, terms)
	code, out := e.postChange(page, body)
	if code != 202 || out["status"] != "pending" || !contains(out["receipt_url"].(string), "activation=") {
		t.Fatalf("change: %d %v", code, out)
	}
	receipt := out["receipt_url"].(string)
	if code, again := e.postChange(page, body); code != 202 || again["receipt_url"] != receipt {
		t.Fatalf("the same body again: %d %v", code, again)
	}
	_, terms2 := e.changeTerms(page, e.payer)
	if code, other := e.postChange(page, e.signedPlan(e.payer, terms2)); code != 202 || other["receipt_url"] != receipt {
		t.Fatalf("another signed plan meanwhile: %d %v", code, other)
	}
	if _, _, html := e.raw("GET", receipt, "", ""); !contains(html, `id="live-pending"`) {
		t.Fatalf("pending page:\n%s", html)
	}
	e.until("subscription.updated", func() bool { return len(e.events("subscription.updated")) == 1 })
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != pro.ID || *got.Amount != "8000000" || got.Status != "active" {
		t.Fatalf("after the change: %+v %v", got, err)
	}
	proration := e.usdc(addr(e.merchant)) - 5_000_000
	if proration <= 2_900_000 || proration > 3_000_000 {
		t.Fatalf("proration charged: %d", proration)
	}
	pay, err := e.api.GetPayment(e.ctx, *got.LatestPaymentID)
	if err != nil || pay.Amount != strconv.FormatInt(proration, 10) || !contains(string(pay.Lines), `"proration"`) {
		t.Fatalf("proration payment %+v %v", pay, err)
	}
	if ent, err := e.api.CheckEntitlement(e.ctx, *sub.CustomerID, "pro"); err != nil || !ent.Entitled {
		t.Fatalf("pro after the change %+v %v", ent, err)
	}
	if _, _, html := e.raw("GET", receipt, "", ""); !contains(html, "Your plan changed") || !contains(html, `id="subscription-plan">`) {
		t.Fatalf("receipt page:\n%s", html)
	}

	// Replays after the change: nothing more moves.
	if code, again := e.postChange(page, body); code != 200 || again["status"] != "succeeded" || again["subscription"] == nil {
		t.Fatalf("replay after the change: %d %v", code, again)
	}
	_, terms3 := e.changeTerms(page, e.payer)
	if terms3["error"] == nil {
		t.Fatalf("terms after the change: %v", terms3)
	}
	if code, again := e.postChange(page, e.signedPlan(e.payer, terms2)); code != 200 || again["status"] != "succeeded" {
		t.Fatalf("another plan after the change: %d %v", code, again)
	}
	e.step()
	if got := e.usdc(addr(e.merchant)); got != 5_000_000+proration || len(e.events("subscription.updated")) != 1 {
		t.Fatalf("after the replays: merchant has %d, %d updates", got, len(e.events("subscription.updated")))
	}

	e.renew(1)
	if got := e.usdc(addr(e.merchant)); got != 5_000_000+proration+8_000_000 {
		t.Fatalf("after the renewal: merchant has %d", got)
	}
}

// TestLiveChangeAtPeriodEndAboveAuthorization: a change at period end
// above the authorization activates the new plan without a charge; the
// change waits as pending and the next renewal charges the new amount on
// chain.
func TestLiveChangeAtPeriodEndAboveAuthorization(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	page := e.reauthorization(sub.ID, pro.ID, "period_end")
	_, terms := e.changeTerms(page, e.payer)
	code, out := e.postChange(page, e.signedPlan(e.payer, terms))
	if code != 202 {
		t.Fatalf("change: %d %v", code, out)
	}
	e.until("subscription.updated", func() bool { return len(e.events("subscription.updated")) == 1 })
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != basic.ID || got.PendingPlanID == nil || *got.PendingPlanID != pro.ID {
		t.Fatalf("after the authorization: %+v %v", got, err)
	}
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("charged at a period-end change: merchant has %d", got)
	}
	// Within the authorization now: the API takes the same change again.
	if _, err := e.api.ChangeSubscription(e.ctx, sub.ID, client.ChangeParams{Plan: pro.ID, At: "period_end"}); err != nil {
		t.Fatal(err)
	}
	e.renew(1)
	if got := e.usdc(addr(e.merchant)); got != 13_000_000 {
		t.Fatalf("after the renewal: merchant has %d", got)
	}
	got, err = e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != pro.ID || got.PendingPlanID != nil {
		t.Fatalf("after the renewal: %+v %v", got, err)
	}
}

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

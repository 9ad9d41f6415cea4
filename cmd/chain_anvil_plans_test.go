package cmd

import (
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// TestAnvilLivePlans runs live-mode subscriptions against a real node over
// HTTP through `tollgate serve --chain-rpc-url`: two payers subscribe from
// their wallets (the plan and permit the checkout page's script signs);
// the activations pull the first week (payers spend no ETH) and the
// subscriptions, first payments and entitlements follow; a replayed
// activation is refused. Anvil's clock then moves a week on, and the
// billing engine renews one (renewal payment, subscription.renewed) while
// the other, whose payer has no USDC left, goes past_due
// (subscription.payment_failed, entitlement in grace). A second charge in
// the same contract period is refused by the contract (cap_exceeded) with
// no gas spent. The payer revokes on chain (gasless, relayed by someone
// else): serve's watcher marks the subscription revoked and its
// entitlement follows, and a charge after it is refused
// (authorization_revoked, no gas). The past-due payer is funded and the
// dunning retry a day later renews it. That payer then drops the
// contract's allowance to zero while serve is down, and the next renewal
// comes first: the contract refuses it (allowance_too_low, no gas) and the
// subscription goes past due, as it would with a used-up permit; serve's
// watcher, reading the Approval to zero after the restart, revokes it.
//
// Serve's billing job renews on the wall clock and plans last at least a
// day (custom interval_days ≥ 1), so the renewals and the retry are run by
// the daemon's billing engine in the test's process (anvilBilling) at the
// periods' due times, over serve's database and the same node.
func TestAnvilLivePlans(t *testing.T) {
	t.Parallel()
	e := newAnvilLive(t, "1", nil)
	h := e.h
	if code, res := h.do("POST", "/v1/features", e.key, `{"key":"pro","name":"Pro"}`); code != 201 {
		t.Fatalf("feature: %d %v", code, res)
	}
	code, plan := h.do("POST", "/v1/plans", e.key, `{"name":"Pro weekly","amount":"5000000","interval":"week","features":[{"feature_key":"pro"}]}`)
	planID, _ := plan["id"].(string)
	if code != 201 || planID == "" {
		t.Fatalf("plan: %d %v", code, plan)
	}
	alice, bob := newTestKey(t), newTestKey(t)
	e.mint(keyAddr(alice), 100_000_000)
	e.mint(keyAddr(bob), 5_000_000) // the first week only

	// Activation from the wallet: the first period pulled in the same
	// transaction, the subscription created once confirmed.
	bodyA, actA := e.subscribe(planID, alice, "u_alice")
	e.subscribe(planID, bob, "u_bob")
	waitUntil(t, "two subscription.active", 60*time.Second, func() bool { return h.events("subscription.active") == 2 })
	subA, subB := e.subscriptionOf(alice), e.subscriptionOf(bob)
	idA, idB := subA["id"].(string), subB["id"].(string)
	cusA, cusB := subA["customer_id"].(string), subB["customer_id"].(string)
	for _, s := range []map[string]any{subA, subB} {
		if s["status"] != "active" || s["latest_payment_id"] == nil || s["livemode"] != true {
			t.Fatalf("subscription after activation: %v", s)
		}
		code, p := h.do("GET", "/v1/payments/"+s["latest_payment_id"].(string), e.key, "")
		if code != 200 || p["amount"] != "5000000" || p["subscription_id"] != s["id"] || p["status"] != "succeeded" ||
			p["network"] != "eip155:31337" || p["tx_hash"] == nil || p["livemode"] != true {
			t.Fatalf("first payment: %d %v", code, p)
		}
	}
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != 10_000_000 {
		t.Fatalf("after two activations the merchant has %d", got)
	}
	if e.ethOf(keyAddr(alice)).Sign() != 0 || e.ethOf(keyAddr(bob)).Sign() != 0 {
		t.Fatal("a payer spent ETH")
	}
	if ok, _ := e.entitled(cusA, "pro"); !ok {
		t.Fatal("alice is not entitled after the activation")
	}
	if _, page := httpGet(h.base + "/checkout/" + planID + "?activation=" + url.QueryEscape(actA) + "&external_customer_id=u_alice"); !strings.Contains(page, `id="subscription-status">active`) {
		t.Fatalf("receipt page:\n%s", page)
	}
	nonce := e.relayerNonce()
	if code, res := h.do("POST", "/checkout/"+planID+"/authorization", "", bodyA); code != 409 || !strings.Contains(fmt.Sprint(res), "already_subscribed") {
		t.Fatalf("replayed activation: %d %v", code, res)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("a replayed activation spent gas")
	}

	// Serve renews on the wall clock: nothing is due for a week.
	due := timeField(t, subA, "current_period_end")
	if until := time.Until(due); until < 6*24*time.Hour {
		t.Fatalf("period ends in %v", until)
	}
	// A week on, on the chain and for the billing engine.
	e.increaseTime(7*24*time.Hour + time.Minute)
	b := e.billing()
	b.runUntil("alice renewed, bob past due", due, func() bool {
		return e.eventsOf("subscription.renewed", idA) == 1 && e.eventsOf("subscription.payment_failed", idB) == 1
	})
	subA, subB = e.subscriptionOf(alice), e.subscriptionOf(bob)
	if subA["status"] != "active" || !timeField(t, subA, "current_period_start").Equal(due) {
		t.Fatalf("alice after the renewal: %v", subA)
	}
	code, p := h.do("GET", "/v1/payments/"+subA["latest_payment_id"].(string), e.key, "")
	if code != 200 || p["amount"] != "5000000" || !timeField(t, p, "period_start").Equal(due) || p["tx_hash"] == nil {
		t.Fatalf("renewal payment: %d %v", code, p)
	}
	if subB["status"] != "past_due" {
		t.Fatalf("bob after a renewal he could not pay: %v", subB)
	}
	if ok, reason := e.entitled(cusB, "pro"); !ok {
		t.Fatalf("bob's entitlement while past due: %v %s (grace expected)", ok, reason)
	}
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != 15_000_000 {
		t.Fatalf("after the renewals the merchant has %d", got)
	}

	// The contract keeps charges within the cap: alice's week is paid.
	nonce = e.relayerNonce()
	if st := b.charge(actA, "chg:anvil:over-cap", keyAddr(alice).Hex(), 1); st.Status != rail.Failed || st.Reason != string(chain.CapExceeded) {
		t.Fatalf("a charge over the cap: %+v", st)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("gas spent on a charge over the cap")
	}

	// Alice revokes without gas; someone with ETH relays it; serve's
	// watcher reads the event.
	act, _, err := chainrail.ParseActivation([]byte(bodyA))
	if err != nil {
		t.Fatal(err)
	}
	pm := chain.NewPlanManager(e.node.eth, common.HexToAddress(e.pm))
	dom, err := pm.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	planHash, err := pm.PlanID(e.ctx, act.Plan)
	if err != nil {
		t.Fatal(err)
	}
	head, err := e.node.eth.HeaderByNumber(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := new(big.Int).SetUint64(head.Time + 3600)
	rsig, err := chain.SignTypedData(alice, chain.RevokeTypedData(dom, planHash, deadline))
	if err != nil {
		t.Fatal(err)
	}
	send(t, e.node.eth, e.deployer, pm.Address, pm.RevokeCall(act.Plan, deadline, rsig).Data)
	waitUntil(t, "subscription.revoked", 60*time.Second, func() bool { return e.eventsOf("subscription.revoked", idA) == 1 })
	if s := e.subscriptionOf(alice); s["status"] != "revoked" {
		t.Fatalf("alice after the revocation: %v", s)
	}
	if ok, reason := e.entitled(cusA, "pro"); ok || reason != "revoked" {
		t.Fatalf("alice's entitlement after the revocation: %v %s", ok, reason)
	}
	nonce = e.relayerNonce()
	if st := b.charge(actA, "chg:anvil:after-revoke", keyAddr(alice).Hex(), 1); st.Status != rail.Failed || st.Reason != rail.AuthorizationRevoked {
		t.Fatalf("a charge after the revocation: %+v", st)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("gas spent on a charge after the revocation")
	}

	// Bob is funded; the dunning retry a day after the failure renews him.
	e.mint(keyAddr(bob), 5_000_000)
	b.runUntil("bob renewed by the retry", due.Add(24*time.Hour), func() bool { return e.eventsOf("subscription.renewed", idB) == 1 })
	if s := e.subscriptionOf(bob); s["status"] != "active" {
		t.Fatalf("bob after the retry: %v", s)
	}
	if ok, reason := e.entitled(cusB, "pro"); !ok || reason != "active" {
		t.Fatalf("bob's entitlement after the retry: %v %s", ok, reason)
	}
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != 20_000_000 {
		t.Fatalf("after the retry the merchant has %d (4 weeks paid)", got)
	}
	if e.eventsOf("subscription.renewed", idA) != 1 || e.eventsOf("subscription.payment_failed", idA) != 0 || e.eventsOf("subscription.revoked", idA) != 1 {
		t.Fatal("alice's revoked subscription was acted on again")
	}

	// Bob drops the plan manager's allowance to zero (a gasless permit,
	// relayed by someone else) while serve is down, and his next renewal
	// comes before serve's watcher reads it: the contract refuses the
	// charge, the billing engine revokes the subscription. The watcher,
	// reading the Approval once serve is back, changes nothing more.
	subB = e.subscriptionOf(bob)
	dueB := timeField(t, subB, "current_period_end")
	e.stopServe()
	pmAddr := common.HexToAddress(e.pm)
	tokDom, err := e.token.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	permitNonce, err := e.token.PermitNonce(e.ctx, keyAddr(bob))
	if err != nil {
		t.Fatal(err)
	}
	if head, err = e.node.eth.HeaderByNumber(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	deadline = new(big.Int).SetUint64(head.Time + 3600)
	psig, err := chain.SignTypedData(bob, chain.PermitTypedData(tokDom, chain.Permit{Owner: keyAddr(bob), Spender: pmAddr, Value: new(big.Int),
		Nonce: permitNonce, Deadline: deadline}))
	if err != nil {
		t.Fatal(err)
	}
	send(t, e.node.eth, e.deployer, e.usdc, e.tok.PackPermit(keyAddr(bob), pmAddr, new(big.Int), deadline, psig))
	if a, err := e.token.Allowance(e.ctx, keyAddr(bob), pmAddr); err != nil || a.Sign() != 0 {
		t.Fatalf("bob's allowance after the permit: %v %v", a, err)
	}
	e.increaseTime(7 * 24 * time.Hour)
	statusOf := func(id string) string {
		var st string
		if err := b.biller.DB.GetContext(e.ctx, &st, `SELECT status FROM subscriptions WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return st
	}
	nonce = e.relayerNonce()
	b.runUntil("bob's renewal refused", dueB, func() bool { return statusOf(idB) == "past_due" })
	if e.relayerNonce() != nonce {
		t.Fatal("gas spent on a renewal the allowance did not cover")
	}
	e.startServe(e.node.url)
	// Two watcher steps after the restart: the first reads the Approval,
	// the second starts only once the first has acted on it.
	watched := func() uint64 {
		var n *int64
		if err := b.biller.DB.GetContext(e.ctx, &n, `SELECT max(number) FROM chain_watch_blocks WHERE watcher = 'chainrail'`); err != nil {
			t.Fatal(err)
		}
		if n == nil {
			return 0
		}
		return uint64(*n)
	}
	for range 2 {
		e.node.mine()
		n, err := e.node.eth.BlockNumber(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, fmt.Sprintf("the watcher at block %d", n), 30*time.Second, func() bool { return watched() >= n })
	}
	waitUntil(t, "the watcher to revoke bob's subscription", 30*time.Second, func() bool { return statusOf(idB) == "revoked" })
	if s := e.subscriptionOf(bob); s["status"] != "revoked" || e.eventsOf("subscription.revoked", idB) != 1 ||
		e.eventsOf("subscription.payment_failed", idB) != 2 || e.eventsOf("subscription.renewed", idB) != 1 {
		t.Fatalf("bob after the allowance dropped: %v; %d subscription.revoked", s, e.eventsOf("subscription.revoked", idB))
	}
	if ok, reason := e.entitled(cusB, "pro"); ok || reason != "revoked" {
		t.Fatalf("bob's entitlement after the allowance dropped: %v %s", ok, reason)
	}
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != 20_000_000 {
		t.Fatalf("at the end the merchant has %d", got)
	}
	if e.ethOf(keyAddr(alice)).Sign() != 0 || e.ethOf(keyAddr(bob)).Sign() != 0 {
		t.Fatal("a payer spent ETH")
	}
}

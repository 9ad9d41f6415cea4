package cmd

import (
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// await moves the chain's clock on a few seconds a block until cond holds:
// serve's billing job then finds what fell due, and a pending charge's
// recheck comes round in the chain's time.
func (e *anvilLive) await(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		e.increaseTime(5 * time.Second)
		time.Sleep(200 * time.Millisecond)
	}
}

// allowance is what payer still lets the plan manager draw.
func (e *anvilLive) allowance(payer common.Address) int64 {
	e.t.Helper()
	a, err := e.token.Allowance(e.ctx, payer, common.HexToAddress(e.pm))
	if err != nil {
		e.t.Fatal(err)
	}
	return a.Int64()
}

// checkoutJSON asks a checkout path for JSON, as the page's script does.
func (e *anvilLive) checkoutJSON(path string) (int, map[string]json.RawMessage) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.h.base+path, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// signServed signs served typed data as a wallet would and returns its
// message and the signature.
func signServed(t *testing.T, k *ecdsa.PrivateKey, raw json.RawMessage) (map[string]any, string) {
	t.Helper()
	td := typedData(t, raw)
	sig, err := chain.SignTypedData(k, td)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for k, v := range td.Message {
		m[k] = v
	}
	return m, hexutil.Encode(sig)
}

// TestAnvilChainClock runs live subscriptions on chain time: `serve --clock
// chain --permit-periods 2` on Anvil, with nothing in the test's process
// but evm_increaseTime and blocks. A week on the chain renews one
// subscription and fails the other's pull (insufficient funds: past due);
// funded, its dunning retry a day later renews it. Another week and both
// two-period permits are used up: the renewals fail with allowance_too_low
// and the subscription's page says so; one customer renews the permit
// there (gasless) and the next retry renews the subscription, then stops
// paying from the revoke page (gasless); the other's dunning runs out and
// the subscription is canceled. Invoices are stamped with the chain's time.
func TestAnvilChainClock(t *testing.T) {
	t.Parallel()
	e := newAnvilLive(t, "1", nil, "--clock", "chain", "--permit-periods", "2")
	h := e.h
	code, plan := h.do("POST", "/v1/plans", e.key, `{"name":"Weekly","amount":"5000000","interval":"week"}`)
	planID, _ := plan["id"].(string)
	if code != 201 || planID == "" {
		t.Fatalf("plan: %d %v", code, plan)
	}
	alice, bob := newTestKey(t), newTestKey(t)
	e.mint(keyAddr(alice), 100_000_000)
	e.mint(keyAddr(bob), 5_000_000) // the first week only
	e.subscribe(planID, alice, "u_alice")
	e.subscribe(planID, bob, "u_bob")
	e.await("two subscription.active", func() bool { return h.events("subscription.active") == 2 })
	idA, idB := e.subscriptionOf(alice)["id"].(string), e.subscriptionOf(bob)["id"].(string)
	if a := e.allowance(keyAddr(alice)); a != 5_000_000 {
		t.Fatalf("alice's permit was two weeks' caps; after the first, %d is left", a)
	}

	// A week on the chain: serve renews alice; bob's pull fails.
	e.increaseTime(7*24*time.Hour + time.Minute)
	e.await("alice renewed, bob past due", func() bool {
		return e.eventsOf("subscription.renewed", idA) == 1 && e.eventsOf("subscription.payment_failed", idB) == 1
	})
	if s := e.subscriptionOf(bob); s["status"] != "past_due" {
		t.Fatalf("bob after the failed pull: %v", s)
	}
	code, inv := h.do("POST", "/v1/invoices", e.key, `{"amount":"1000000","description":"Stamped by the chain"}`)
	if code != 201 || timeField(t, inv, "created_at").Before(time.Now().Add(7*24*time.Hour)) {
		t.Fatalf("an invoice created a week on, on the chain: %d %v", code, inv)
	}
	// Funded, bob is renewed by the dunning retry a day after the failure.
	e.mint(keyAddr(bob), 5_000_000)
	e.increaseTime(24 * time.Hour)
	e.await("bob renewed by the retry", func() bool { return e.eventsOf("subscription.renewed", idB) == 1 })

	// Another week: both two-week permits are used up.
	e.increaseTime(6 * 24 * time.Hour)
	e.await("both renewals refused for the allowance", func() bool {
		return e.eventsOf("subscription.payment_failed", idA) == 1 && e.eventsOf("subscription.payment_failed", idB) == 2
	})
	if _, page := httpGet(h.base + "/checkout/" + idA); !strings.Contains(page, `id="permit-used-up"`) {
		t.Fatalf("alice's subscription page does not say the permit is used up:\n%s", page)
	}
	// Alice renews the permit on her subscription's page, without gas.
	code, terms := e.checkoutJSON("/checkout/" + idA + "/authorization?payer=" + keyAddr(alice).Hex())
	if code != 200 {
		t.Fatalf("permit terms: %d %v", code, terms)
	}
	permit, sig := signServed(t, alice, terms["permit"])
	b, _ := json.Marshal(map[string]any{"value": permit["value"], "deadline": permit["deadline"], "signature": sig})
	if code, out := h.do("POST", "/checkout/"+idA+"/authorization", "", string(b)); code != 202 {
		t.Fatalf("permit renewal: %d %v", code, out)
	}
	e.await("alice's renewed permit", func() bool { return e.allowance(keyAddr(alice)) == 10_000_000 })
	e.increaseTime(24 * time.Hour)
	e.await("alice renewed by the retry", func() bool { return e.eventsOf("subscription.renewed", idA) == 2 })
	if s := e.subscriptionOf(alice); s["status"] != "active" {
		t.Fatalf("alice after the retry: %v", s)
	}

	// Alice stops paying from the revoke page, without gas.
	code, terms = e.checkoutJSON("/checkout/" + idA + "/revoke")
	if code != 200 {
		t.Fatalf("revocation terms: %d %v", code, terms)
	}
	revoke, sig := signServed(t, alice, terms["typed_data"])
	b, _ = json.Marshal(map[string]any{"deadline": revoke["deadline"], "signature": sig})
	if code, out := h.do("POST", "/checkout/"+idA+"/revoke", "", string(b)); code != 202 {
		t.Fatalf("revocation: %d %v", code, out)
	}
	e.await("alice's subscription revoked", func() bool { return e.eventsOf("subscription.revoked", idA) == 1 })

	// Bob's dunning runs out.
	e.increaseTime(4 * 24 * time.Hour)
	e.await("bob's dunning exhausted", func() bool { return e.eventsOf("subscription.dunning_exhausted", idB) == 1 })
	if s := e.subscriptionOf(bob); s["status"] != "canceled" {
		t.Fatalf("bob after dunning: %v", s)
	}
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != 25_000_000 {
		t.Fatalf("the merchant has %d (alice 3 weeks, bob 2)", got)
	}
	if e.ethOf(keyAddr(alice)).Sign() != 0 || e.ethOf(keyAddr(bob)).Sign() != 0 {
		t.Fatal("a customer spent gas")
	}
}

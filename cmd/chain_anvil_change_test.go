package cmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// TestAnvilLivePlanChange runs a live upgrade above the payer's on-chain
// authorization through `tollgate serve` against a real node: the API
// answers authorization_required with the page; the payer signs the new
// plan and permit the page's script asks for; serve's relayer activates
// it with the proration as its first charge and its settlement job makes
// the change (subscription.updated, the proration payment); posting the
// same signature again sends nothing; a week on, the renewal charges the
// new amount on the new plan.
func TestAnvilLivePlanChange(t *testing.T) {
	t.Parallel()
	e := newAnvilLive(t, "1", nil)
	h := e.h
	planOf := func(body string) string {
		code, p := h.do("POST", "/v1/plans", e.key, body)
		id, _ := p["id"].(string)
		if code != 201 || id == "" {
			t.Fatalf("plan: %d %v", code, p)
		}
		return id
	}
	basic := planOf(`{"name":"Basic weekly","amount":"5000000","interval":"week"}`)
	pro := planOf(`{"name":"Pro weekly","amount":"8000000","interval":"week"}`)
	alice := newTestKey(t)
	e.mint(keyAddr(alice), 100_000_000)
	e.subscribe(basic, alice, "u_alice")
	waitUntil(t, "subscription.active", 60*time.Second, func() bool { return h.events("subscription.active") == 1 })
	sub := e.subscriptionOf(alice)
	id := sub["id"].(string)
	due := timeField(t, sub, "current_period_end")

	code, res := h.do("POST", "/v1/subscriptions/"+id+"/change", e.key, fmt.Sprintf(`{"plan":%q,"at":"now"}`, pro))
	errObj, _ := res["error"].(map[string]any)
	page, _ := errObj["checkout_url"].(string)
	u, err := url.Parse(page)
	if code != 409 || errObj["code"] != "authorization_required" || err != nil || u.Query().Get("plan") != pro {
		t.Fatalf("change above the authorization: %d %v", code, res)
	}
	q := u.Query()
	q.Set("payer", keyAddr(alice).Hex())
	code, terms := h.do("GET", u.Path+"/authorization?"+q.Encode(), "", "")
	if code != 200 || terms["kind"] != "plan" {
		t.Fatalf("change terms: %d %v", code, terms)
	}
	planTD, permitTD := typedData(t, terms["plan"]), typedData(t, terms["permit"])
	planSig, err := chain.SignTypedData(alice, planTD)
	if err != nil {
		t.Fatal(err)
	}
	permitSig, err := chain.SignTypedData(alice, permitTD)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": hexutil.Encode(planSig),
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": hexutil.Encode(permitSig)}})
	post := u.Path + "/authorization?" + u.RawQuery
	code, out := h.do("POST", post, "", string(b))
	receipt, _ := out["receipt_url"].(string)
	if code != 202 || !strings.Contains(receipt, "activation=") {
		t.Fatalf("signed change: %d %v", code, out)
	}
	waitUntil(t, "subscription.updated", 60*time.Second, func() bool { return e.eventsOf("subscription.updated", id) == 1 })
	nonce := e.relayerNonce()
	if code, again := h.do("POST", post, "", string(b)); code != 200 || again["status"] != "succeeded" {
		t.Fatalf("the same signature after the change: %d %v", code, again)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("a replayed change spent gas")
	}
	sub = e.subscriptionOf(alice)
	if sub["plan_id"] != pro || sub["amount"] != "8000000" || sub["status"] != "active" {
		t.Fatalf("after the change: %v", sub)
	}
	code, p := h.do("GET", "/v1/payments/"+sub["latest_payment_id"].(string), e.key, "")
	proration, _ := p["amount"].(string)
	if code != 200 || p["subscription_id"] != id || !strings.Contains(fmt.Sprint(p["lines"]), "proration") || len(proration) != 7 || proration[0] != '2' {
		t.Fatalf("proration payment: %d %v", code, p)
	}
	paid := e.usdcOf(common.HexToAddress(e.maddr))
	if e.ethOf(keyAddr(alice)).Sign() != 0 {
		t.Fatal("the payer spent ETH")
	}

	// A week on: the renewal charges the new amount on the new plan.
	e.increaseTime(7*24*time.Hour + time.Minute)
	e.billing().runUntil("renewed on the new plan", due, func() bool { return e.eventsOf("subscription.renewed", id) == 1 })
	if got := e.usdcOf(common.HexToAddress(e.maddr)); got != paid+8_000_000 {
		t.Fatalf("after the renewal the merchant has %d, had %d", got, paid)
	}
}

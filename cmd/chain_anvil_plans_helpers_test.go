package cmd

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

func keyAddr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// typedData reads typed data out of a decoded JSON answer.
func typedData(t *testing.T, v any) apitypes.TypedData {
	t.Helper()
	raw, _ := json.Marshal(v)
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil || td.PrimaryType == "" {
		t.Fatalf("typed data %s: %v", raw, err)
	}
	return td
}

// subscribe does what the live checkout page's script does for a plan
// (daemon/pages/checkout_live.js): it asks the checkout what payer signs,
// signs the plan and the permit as eth_signTypedData_v4 does, and posts
// them. It returns the body posted and the activation's key (from the
// receipt URL).
func (e *anvilLive) subscribe(planID string, payer *ecdsa.PrivateKey, externalID string) (body, activation string) {
	e.t.Helper()
	code, terms := e.h.do("GET", "/checkout/"+planID+"/authorization?payer="+keyAddr(payer).Hex(), "", "")
	if code != 200 || terms["kind"] != "plan" {
		e.t.Fatalf("plan terms: %d %v", code, terms)
	}
	planTD, permitTD := typedData(e.t, terms["plan"]), typedData(e.t, terms["permit"])
	planSig, err := chain.SignTypedData(payer, planTD)
	if err != nil {
		e.t.Fatal(err)
	}
	permitSig, err := chain.SignTypedData(payer, permitTD)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": hexutil.Encode(planSig), "external_customer_id": externalID,
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": hexutil.Encode(permitSig)}})
	code, out := e.h.do("POST", "/checkout/"+planID+"/authorization", "", string(b))
	receipt, _ := out["receipt_url"].(string)
	u, err := url.Parse(receipt)
	if code != 202 || out["status"] != "pending" || err != nil || u.Query().Get("activation") == "" {
		e.t.Fatalf("activation: %d %v", code, out)
	}
	return string(b), u.Query().Get("activation")
}

// subscriptionOf returns the live subscription whose payer is k.
func (e *anvilLive) subscriptionOf(k *ecdsa.PrivateKey) map[string]any {
	e.t.Helper()
	code, l := e.h.do("GET", "/v1/subscriptions?limit=100", e.key, "")
	if code != 200 {
		e.t.Fatalf("GET /v1/subscriptions: %d %v", code, l)
	}
	data, _ := l["data"].([]any)
	for _, x := range data {
		if s := x.(map[string]any); strings.EqualFold(fmt.Sprint(s["payer"]), keyAddr(k).Hex()) {
			return s
		}
	}
	e.t.Fatalf("no subscription paid by %s in %v", keyAddr(k).Hex(), l)
	return nil
}

// entitled checks a customer's feature.
func (e *anvilLive) entitled(customerID, feature string) (bool, string) {
	e.t.Helper()
	code, out := e.h.do("GET", "/v1/customers/"+customerID+"/entitlements/"+feature, e.key, "")
	if code != 200 {
		e.t.Fatalf("entitlement check: %d %v", code, out)
	}
	ok, _ := out["entitled"].(bool)
	reason, _ := out["reason"].(string)
	return ok, reason
}

// eventsOf counts the events of type typ about object id.
func (e *anvilLive) eventsOf(typ, id string) int {
	e.t.Helper()
	code, l := e.h.do("GET", "/v1/events?limit=100", e.key, "")
	if code != 200 {
		e.t.Fatalf("GET /v1/events: %d %v", code, l)
	}
	n := 0
	data, _ := l["data"].([]any)
	for _, x := range data {
		ev := x.(map[string]any)
		if obj, _ := ev["data"].(map[string]any); ev["type"] == typ && obj["id"] == id {
			n++
		}
	}
	return n
}

// increaseTime moves Anvil's clock on by d and mines a block at the new
// time.
func (e *anvilLive) increaseTime(d time.Duration) {
	e.t.Helper()
	if err := e.node.rpc.Call(nil, "evm_increaseTime", int64(d/time.Second)); err != nil {
		e.t.Fatal(err)
	}
	e.node.mine()
}

func timeField(t *testing.T, m map[string]any, name string) time.Time {
	t.Helper()
	s, _ := m[name].(string)
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s of %v: %v", name, m, err)
	}
	return v
}

// anvilBilling is the daemon's billing engine and live rail, in the test's
// process, over serve's database and the same node and relayer key (a
// second replica, as admin refund is): it runs renewals and dunning
// retries at a time the test chooses, which serve's own billing job, on
// the wall clock, would reach only days later.
type anvilBilling struct {
	e      *anvilLive
	scope  tenant.Scope
	rail   *chainrail.Rail
	biller *subscriptions.Biller
}

func (e *anvilLive) billing() *anvilBilling {
	e.t.Helper()
	db, err := store.Open(e.ctx, e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	confs, _ := strconv.ParseUint(e.confs, 10, 64)
	r, client, err := daemon.NewLiveRail(daemon.ChainConfig{RPCURL: e.node.url, USDCAddress: e.usdc.Hex(), PlanManager: e.pm,
		RelayerKeyFile: e.relayerFile, Confirmations: confs}, db, clock.System{}, slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(client.Close)
	return &anvilBilling{e: e, scope: tenant.Scope{MerchantID: e.merchantID, Mode: tenant.Live}, rail: r,
		biller: &subscriptions.Biller{DB: db, Rail: func(m tenant.Mode) (rail.Rail, bool) { return r, m == tenant.Live },
			Policy: subscriptions.DefaultPolicy(), Clock: clock.System{}}}
}

// runUntil runs the billing engine on everything due up to `from`, then a
// little later each time (past a pending charge's recheck, never past
// `from`+1h), stepping the relayer meanwhile, until cond holds.
func (b *anvilBilling) runUntil(what string, from time.Time, cond func() bool) {
	b.e.t.Helper()
	upTo := from
	waitUntil(b.e.t, what, 60*time.Second, func() bool {
		if err := b.biller.CatchUp(b.e.ctx, b.scope, upTo); err != nil {
			b.e.t.Fatal(err)
		}
		if _, err := b.rail.Relayer().Step(b.e.ctx); err != nil {
			b.e.t.Fatal(err)
		}
		if upTo.Before(from.Add(time.Hour)) {
			upTo = upTo.Add(16 * time.Second)
		}
		return cond()
	})
}

// charge asks the rail for a charge on an activation's plan, as the
// billing engine does, until it is final.
func (b *anvilBilling) charge(activation, key, payer string, amount int64) rail.Settlement {
	b.e.t.Helper()
	var st rail.Settlement
	waitUntil(b.e.t, "charge "+key, 30*time.Second, func() bool {
		ss, err := b.rail.Settle(b.e.ctx, []rail.Request{{Scope: b.scope, Kind: rail.Charge, Key: key, Nonce: activation,
			Payer: strings.ToLower(payer), Amount: money.Amount(amount), At: time.Now()}})
		if err != nil {
			b.e.t.Fatal(err)
		}
		st = ss[0]
		return st.Status != rail.Pending
	})
	return st
}

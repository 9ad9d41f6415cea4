package daemon_test

import (
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// getJSON asks a checkout path for JSON, as the page's script does.
func (e *liveEnv) getJSON(path string) (int, map[string]json.RawMessage) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := e.httpClient().Do(req)
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

func (e *liveEnv) post(path string, body any) (int, map[string]any) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	st, _, out := e.raw("POST", path, "", string(b))
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("POST %s: %d %s", path, st, out)
	}
	return st, m
}

// message reads the message of served typed data.
func message(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var td struct {
		Domain  map[string]any `json:"domain"`
		Message map[string]any `json:"message"`
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		t.Fatal(err)
	}
	if _, ok := td.Domain["salt"]; ok {
		t.Fatalf("the domain carries a salt its types do not declare: %s", raw)
	}
	return td.Message
}

// TestLiveTypedDataWithWalletSigners signs every typed-data payload live
// mode hands a wallet with two signers nobody here wrote, ethers v6 and
// viem, exactly as served: an invoice's transfer authorization, a plan and
// its permit (bounded: twelve periods' caps, not unlimited), the renewed
// permit of a subscription's page, the revocation, and the refund
// authorization admin refund prints. Each is accepted and does what it
// says; the payers spend no gas. The typed data as go-ethereum serialises
// it ("salt": "") is refused by ethers, so the test would catch it.
func TestLiveTypedDataWithWalletSigners(t *testing.T) {
	t.Parallel()
	sg := chaintest.StartSigners(t, chaintest.WalletDir(t, "testdata/wallet"))
	e := newLiveEnv(t, 1)
	plan, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro", Amount: "5000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	tokDom, err := e.token.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	legacy, _ := json.Marshal(chain.PermitTypedData(tokDom, chain.Permit{Owner: addr(e.payer), Spender: e.pm.Address, Value: big.NewInt(1),
		Nonce: new(big.Int), Deadline: big.NewInt(1)}))
	if _, err := sg.Sign("ethers", e.payer, legacy); err == nil || !strings.Contains(err.Error(), "BytesLike") {
		t.Fatalf("ethers signed typed data with an undeclared empty salt: %v", err)
	}

	for i, signer := range chaintest.SignerNames {
		payer := newKey(t)
		e.mint(addr(payer), 100_000_000)

		// An invoice.
		inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "4200000", Description: "Signed by " + signer})
		if err != nil {
			t.Fatal(err)
		}
		terms := e.terms(inv.ID, addr(payer))
		body := message(t, terms["typed_data"])
		body["signature"] = sg.MustSign(signer, payer, terms["typed_data"])
		if code, out := e.post("/checkout/"+inv.ID+"/authorization", body); code != 202 {
			t.Fatalf("%s: invoice authorization: %d %v", signer, code, out)
		}
		e.until(signer+": invoice paid", func() bool {
			got, err := e.api.GetInvoice(e.ctx, inv.ID)
			return err == nil && got.Status == "paid"
		})

		// A plan: its terms and a bounded permit.
		terms = e.terms(plan.ID, addr(payer))
		var summary struct {
			Value   string `json:"value"`
			Periods uint64 `json:"periods"`
			Text    string `json:"text"`
		}
		_ = json.Unmarshal(terms["permit_summary"], &summary)
		permitMsg := message(t, terms["permit"])
		if permitMsg["value"] != "60000000" || summary.Value != "60000000" || summary.Periods != 12 ||
			!strings.Contains(summary.Text, "60.00 USDC") || !strings.Contains(summary.Text, "one week each") {
			t.Fatalf("%s: the permit is not twelve weeks' caps: %v %+v", signer, permitMsg["value"], summary)
		}
		planMsg := message(t, terms["plan"])
		code, out := e.post("/checkout/"+plan.ID+"/authorization", map[string]any{"plan": planMsg,
			"signature": sg.MustSign(signer, payer, terms["plan"]),
			"permit": map[string]any{"value": permitMsg["value"], "deadline": permitMsg["deadline"],
				"signature": sg.MustSign(signer, payer, terms["permit"])}})
		if code != 202 {
			t.Fatalf("%s: activation: %d %v", signer, code, out)
		}
		e.until(signer+": subscription.active", func() bool { return len(e.events("subscription.active")) == i+1 })
		sub := e.subscriptionPaidBy(addr(payer))
		if a, _ := e.token.Allowance(e.ctx, addr(payer), e.pm.Address); a.Int64() != 55_000_000 {
			t.Fatalf("%s: allowance after the first week: %v", signer, a)
		}

		// The subscription's page renews the permit.
		code, terms = e.getJSON("/checkout/" + sub + "/authorization?payer=" + url.QueryEscape(addr(payer).Hex()))
		renewed := message(t, terms["permit"])
		if code != 200 || renewed["value"] != "115000000" {
			t.Fatalf("%s: renewal terms: %d %v", signer, code, renewed)
		}
		if code, out := e.post("/checkout/"+sub+"/authorization", map[string]any{"value": renewed["value"], "deadline": renewed["deadline"],
			"signature": sg.MustSign(signer, payer, terms["permit"])}); code != 202 {
			t.Fatalf("%s: permit renewal: %d %v", signer, code, out)
		}
		e.until(signer+": the renewed allowance", func() bool {
			a, _ := e.token.Allowance(e.ctx, addr(payer), e.pm.Address)
			return a.Int64() == 115_000_000
		})

		// The customer stops paying.
		code, terms = e.getJSON("/checkout/" + sub + "/revoke")
		revoke := message(t, terms["typed_data"])
		if code != 200 || revoke["planId"] == nil {
			t.Fatalf("%s: revocation terms: %d %v", signer, code, terms)
		}
		if code, out := e.post("/checkout/"+sub+"/revoke", map[string]any{"deadline": revoke["deadline"],
			"signature": sg.MustSign(signer, payer, terms["typed_data"])}); code != 202 || out["status"] != "pending" {
			t.Fatalf("%s: revocation: %d %v", signer, code, out)
		}
		e.until(signer+": subscription revoked", func() bool {
			x, err := e.api.GetSubscription(e.ctx, sub)
			return err == nil && x.Status == "revoked"
		})
		if e.eth(addr(payer)).Sign() != 0 {
			t.Fatalf("%s: the payer spent gas", signer)
		}
	}

	// The refund authorization admin refund prints, signed by the
	// merchant's wallet.
	_, td, err := e.token.RefundAuthorization(e.ctx, addr(e.merchant), addr(e.payer), big.NewInt(1_000_000), "re_signers", 0)
	if err != nil {
		t.Fatal(err)
	}
	printed, err := json.Marshal(chain.WalletTypedData(td))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := chain.Digest(td)
	if err != nil {
		t.Fatal(err)
	}
	for _, signer := range chaintest.SignerNames {
		sig, err := hexutil.Decode(sg.MustSign(signer, e.merchant, printed))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := chain.Recover(digest, sig); err != nil || got != addr(e.merchant) {
			t.Fatalf("%s: the refund signature recovers to %s (%v)", signer, got.Hex(), err)
		}
	}
	var back apitypes.TypedData
	if err := json.Unmarshal(printed, &back); err != nil || back.Domain.Salt != "" {
		t.Fatalf("the printed refund: %v %+v", err, back.Domain)
	}
}

// subscriptionPaidBy is the id of the newest subscription paid from a.
func (e *liveEnv) subscriptionPaidBy(a common.Address) string {
	e.t.Helper()
	l, err := e.api.ListSubscriptions(e.ctx, client.ListParams{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, x := range l.Data {
		if x.Payer != nil && strings.EqualFold(*x.Payer, a.Hex()) {
			return x.ID
		}
	}
	e.t.Fatalf("no subscription paid by %s", a.Hex())
	return ""
}

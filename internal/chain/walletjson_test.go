package chain_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// TestWalletTypedData: every payload's JSON has exactly the domain fields
// its types declare (no "salt": "" for a domain without salt), chainId as
// a number, and decodes back into typed data with the same digest.
func TestWalletTypedData(t *testing.T) {
	t.Parallel()
	d := chain.Domain{Name: "USD Coin", Version: "2", ChainID: big.NewInt(31337),
		VerifyingContract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")}
	one := big.NewInt(1)
	a := common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
	payloads := map[string]apitypes.TypedData{
		"transfer": chain.TransferTypedData(d, chain.TransferAuthorization{From: a, To: a, Value: one, ValidAfter: one, ValidBefore: one}),
		"cancel":   chain.CancelTypedData(d, a, common.Hash{1}),
		"permit":   chain.PermitTypedData(d, chain.Permit{Owner: a, Spender: a, Value: one, Nonce: one, Deadline: one}),
		"plan": chain.PlanTypedData(d, chain.Plan{Payer: a, Payee: a, Token: a, CapPerPeriod: one, Period: one, Start: one,
			End: one, Salt: common.Hash{2}}),
		"revoke": chain.RevokeTypedData(d, common.Hash{3}, one),
	}
	for name, td := range payloads {
		b, err := json.Marshal(chain.WalletTypedData(td))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var raw struct {
			Domain json.RawMessage `json:"domain"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		want := `{"name":"USD Coin","version":"2","chainId":31337,"verifyingContract":"0x5FbDB2315678afecb367f032d93F642f64180aa3"}`
		if string(raw.Domain) != want {
			t.Fatalf("%s: domain %s, want %s", name, raw.Domain, want)
		}
		if strings.Contains(string(b), "salt\":\"\"") {
			t.Fatalf("%s: an empty salt in %s", name, b)
		}
		var back apitypes.TypedData
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h1, err1 := chain.Digest(td)
		h2, err2 := chain.Digest(back)
		if err1 != nil || err2 != nil || h1 != h2 {
			t.Fatalf("%s: digest %s %v, after the round trip %s %v", name, h1, err1, h2, err2)
		}
	}
	broken := payloads["permit"]
	broken.Domain.ChainId = nil
	if _, err := json.Marshal(chain.WalletTypedData(broken)); err == nil {
		t.Fatal("a declared chainId without a value marshalled")
	}
}

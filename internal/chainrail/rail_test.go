package chainrail_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/chain/relayer"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func key(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// TestPlanChargesWithinTheCap drives the rail as the billing engine does,
// on a simulated chain: an activation with its first charge, a second
// charge in the same period refused (cap_exceeded) with no gas spent, a
// charge in the next period, and after the payer revokes, a charge refused
// (authorization_revoked). Every refusal answers the same under its key.
func TestPlanChargesWithinTheCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	deployer, relay, payer, merchant := key(t), key(t), key(t), key(t)
	eth := new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	sim := simulated.NewBackend(types.GenesisAlloc{addr(deployer): {Balance: eth}, addr(relay): {Balance: eth}})
	t.Cleanup(func() { sim.Close() })
	c := sim.Client()
	id, _ := c.ChainID(ctx)
	deploy := func(bin string, args []byte) common.Address {
		a, _, err := bind.DeployContract(bind.NewKeyedTransactor(deployer, id), common.FromHex(bin), c, args)
		if err != nil {
			t.Fatal(err)
		}
		sim.Commit()
		return a
	}
	tok := contracts.NewTestUSDC()
	usdc := deploy(contracts.TestUSDCMetaData.Bin, tok.PackConstructor("USD Coin", "USDC", "2"))
	pmAddr := deploy(contracts.PlanManagerMetaData.Bin, contracts.NewPlanManager().PackConstructor(addr(relay)))
	sendAs := func(to common.Address, data []byte) {
		t.Helper()
		nonce, _ := c.PendingNonceAt(ctx, addr(deployer))
		head, _ := c.HeaderByNumber(ctx, nil)
		tip := big.NewInt(10e9)
		tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: tip,
			GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), tip), Gas: 500_000, To: &to, Data: data}),
			types.LatestSignerForChainID(id), deployer)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SendTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
		sim.Commit()
	}
	sendAs(usdc, tok.PackMint(addr(payer), big.NewInt(100_000_000)))

	db := testdb.Open(t)
	r, err := chainrail.New(ctx, db, c, relay, chainrail.Config{Token: usdc, PlanManager: pmAddr, Relayer: relayer.Config{Confirmations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s := tenant.Scope{MerchantID: "mer_x", Mode: tenant.Live}
	terms, err := r.PlanTerms(ctx, addr(payer), addr(merchant), 5_000_000, 86400)
	if err != nil {
		t.Fatal(err)
	}
	planSig, _ := chain.SignTypedData(payer, terms.PlanTypedData)
	permitSig, _ := chain.SignTypedData(payer, terms.PermitTypedData)
	act := &chainrail.Activation{Plan: terms.Plan, Signature: planSig,
		Permit: chain.SignedPermit{Value: terms.Permit.Value, Deadline: terms.Permit.Deadline, Signature: permitSig}, PlanID: "price_x", CustomerID: "cus_x"}
	settle := func(req rail.Request) rail.Settlement {
		t.Helper()
		req.Scope, req.At = s, time.Now()
		ss, err := r.Settle(ctx, []rail.Request{req})
		if err != nil {
			t.Fatal(err)
		}
		return ss[0]
	}
	final := func(req rail.Request) rail.Settlement {
		t.Helper()
		for range 20 {
			if st := settle(req); st.Status != rail.Pending {
				return st
			}
			sim.Commit()
			if _, err := r.Relayer().Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		t.Fatalf("%s still pending", req.Key)
		return rail.Settlement{}
	}
	payerHex, payeeHex := addr(payer).Hex(), addr(merchant).Hex()
	activation := rail.Request{Kind: rail.Activate, Key: "act:1", Nonce: "act:1", Payer: payerHex, Payee: payeeHex, Amount: 5_000_000, Payload: act}
	if st := final(activation); st.Status != rail.Succeeded || st.TxHash == "" {
		t.Fatalf("activation %+v", st)
	}
	charge := func(k string) rail.Request {
		return rail.Request{Kind: rail.Charge, Key: k, Nonce: "act:1", Payer: payerHex, Amount: 1}
	}
	nonce, _ := c.PendingNonceAt(ctx, addr(relay))
	if st := final(charge("chg:same-period")); st.Status != rail.Failed || st.Reason != string(chain.CapExceeded) {
		t.Fatalf("a charge over the cap: %+v", st)
	}
	if again := settle(charge("chg:same-period")); again.Status != rail.Failed || again.Reason != string(chain.CapExceeded) {
		t.Fatalf("asked again: %+v", again)
	}
	if n, _ := c.PendingNonceAt(ctx, addr(relay)); n != nonce {
		t.Fatal("gas spent on a charge over the cap")
	}
	chaintest.AdjustTime(t, sim, 24*time.Hour)
	sim.Commit()
	if st := final(charge("chg:next-period")); st.Status != rail.Succeeded {
		t.Fatalf("next period: %+v", st)
	}
	// The payer revokes (gasless; someone relays it).
	pm := r.PlanManager()
	dom, _ := pm.Domain(ctx)
	planID, _ := pm.PlanID(ctx, terms.Plan)
	deadline := new(big.Int).SetUint64(uint64(time.Now().Add(48 * time.Hour).Unix()))
	rsig, _ := chain.SignTypedData(payer, chain.RevokeTypedData(dom, planID, deadline))
	sendAs(pmAddr, pm.RevokeCall(terms.Plan, deadline, rsig).Data)
	chaintest.AdjustTime(t, sim, 24*time.Hour)
	sim.Commit()
	if st := final(charge("chg:after-revoke")); st.Status != rail.Failed || st.Reason != rail.AuthorizationRevoked {
		t.Fatalf("after the revocation: %+v", st)
	}
	if got, _ := r.Token().BalanceOf(ctx, addr(merchant)); got.Int64() != 5_000_001 {
		t.Fatalf("merchant has %v", got)
	}
}

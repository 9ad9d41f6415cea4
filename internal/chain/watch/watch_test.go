package watch

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
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

type env struct {
	t       *testing.T
	ctx     context.Context
	sim     *simulated.Backend
	c       simulated.Client
	chainID *big.Int
	op      *ecdsa.PrivateKey
	payer   *ecdsa.PrivateKey
	payee   common.Address
	token   *chain.Token
	plans   *chain.PlanManager
	tok     *contracts.TestUSDC
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func newEnv(t *testing.T) *env {
	e := &env{t: t, ctx: context.Background(), op: newKey(t), payer: newKey(t), payee: addr(newKey(t)), tok: contracts.NewTestUSDC()}
	eth := new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	e.sim = simulated.NewBackend(types.GenesisAlloc{addr(e.op): {Balance: eth}, addr(e.payer): {Balance: eth}})
	t.Cleanup(func() { e.sim.Close() })
	e.c = e.sim.Client()
	e.chainID, _ = e.c.ChainID(e.ctx)
	opts := bind.NewKeyedTransactor(e.op, e.chainID)
	usdc, _, err := bind.DeployContract(opts, common.FromHex(contracts.TestUSDCMetaData.Bin), e.c, e.tok.PackConstructor("USD Coin", "USDC", "2"))
	if err != nil {
		t.Fatal(err)
	}
	pm, _, err := bind.DeployContract(opts, common.FromHex(contracts.PlanManagerMetaData.Bin), e.c, contracts.NewPlanManager().PackConstructor(addr(e.op)))
	if err != nil {
		t.Fatal(err)
	}
	e.sim.Commit()
	e.token, e.plans = chain.NewToken(e.c, usdc), chain.NewPlanManager(e.c, pm)
	return e
}

func (e *env) send(k *ecdsa.PrivateKey, c chain.Call) {
	e.t.Helper()
	nonce, _ := e.c.PendingNonceAt(e.ctx, addr(k))
	head, _ := e.c.HeaderByNumber(e.ctx, nil)
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: big.NewInt(1e9),
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), big.NewInt(1e9)), Gas: 500_000,
		To: &c.To, Data: c.Data}), types.LatestSignerForChainID(e.chainID), k)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
	r, err := e.c.TransactionReceipt(e.ctx, tx.Hash())
	if err != nil || r.Status != 1 {
		e.t.Fatalf("transaction failed: %v", err)
	}
}

// TestWatcherFollowsEventsAndReorgs: bounded ranges, every kind of event
// the rail needs, and a reorg that rewinds the cursor.
func TestWatcherFollowsEventsAndReorgs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	db, err := store.Open(e.ctx, testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// Activity: a direct payment, a plan activated and charged, the
	// allowance dropped to zero, the plan revoked.
	e.send(e.op, chain.Call{To: e.token.Address, Data: e.tok.PackMint(addr(e.payer), big.NewInt(100_000_000))})
	e.send(e.payer, chain.Call{To: e.token.Address, Data: e.tok.PackTransfer(e.payee, big.NewInt(1_000_000))})
	start := uint64(time.Now().Unix()) - 600
	p := chain.Plan{Payer: addr(e.payer), Payee: e.payee, Token: e.token.Address, CapPerPeriod: big.NewInt(5_000_000),
		Period: big.NewInt(86400 * 30), Start: new(big.Int).SetUint64(start), End: new(big.Int).SetUint64(start + 86400*365),
		Salt: chain.NonceFor("sub_w")}
	pd, err := e.plans.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	psig, err := chain.SignTypedData(e.payer, chain.PlanTypedData(pd, p))
	if err != nil {
		t.Fatal(err)
	}
	e.send(e.payer, chain.Call{To: e.token.Address, Data: e.tok.PackApprove(e.plans.Address, big.NewInt(50_000_000))})
	e.send(e.op, e.plans.ActivateCall(p, psig, chain.SignedPermit{}, big.NewInt(2_000_000), chain.NonceFor("pay_w1")))
	e.send(e.op, e.plans.ChargeCall(p, big.NewInt(3_000_000), chain.NonceFor("pay_w2")))
	e.send(e.payer, chain.Call{To: e.token.Address, Data: e.tok.PackApprove(e.plans.Address, new(big.Int))})
	beforeRevoke, _ := e.c.HeaderByNumber(e.ctx, nil)
	e.send(e.payer, chain.Call{To: e.plans.Address, Data: contracts.NewPlanManager().PackRevoke(planBinding(p))})

	w, err := New(e.ctx, db, e.c, Config{Name: "t", Token: e.token.Address, PlanManager: e.plans.Address,
		Payees: []common.Address{e.payee}, MaxRange: 3})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	var revokedAllowance, chargeRef bool
	var last uint64
	head, _ := e.c.BlockNumber(e.ctx)
	for i := 0; last < head; i++ {
		if i > 100 {
			t.Fatal("the watcher does not reach the head")
		}
		b, err := w.Step(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b.Reorg != nil {
			t.Fatalf("reorg reported on a quiet chain: %d", *b.Reorg)
		}
		if b.To-b.From+1 > 3 {
			t.Fatalf("range %d-%d is wider than MaxRange", b.From, b.To)
		}
		if i > 0 && b.From != last+1 {
			t.Fatalf("range starts at %d after %d", b.From, last)
		}
		last = b.To
		for _, ev := range b.Events {
			kinds[ev.Kind]++
			if ev.Kind == Approval && ev.AllowanceRevoked && ev.From == addr(e.payer) {
				revokedAllowance = true
			}
			if ev.Kind == PlanCharged && ev.Ref == chain.NonceFor("pay_w2") && ev.Value.Int64() == 3_000_000 {
				chargeRef = true
			}
		}
	}
	// Transfers to the payee: the direct payment, the activation's first
	// charge and the renewal.
	if kinds[Transfer] != 3 || kinds[PlanActivated] != 1 || kinds[PlanCharged] != 2 || kinds[PlanRevoked] != 1 || kinds[Approval] != 2 {
		t.Fatalf("events %v", kinds)
	}
	if !revokedAllowance || !chargeRef {
		t.Fatalf("allowance revoked seen: %v, charge ref seen: %v", revokedAllowance, chargeRef)
	}

	// A reorg from before the revocation: the watcher rewinds and says so.
	chaintest.Fork(t, e.sim, beforeRevoke.Hash())
	e.sim.Rollback()
	e.sim.Commit()
	e.sim.Commit()
	e.sim.Commit()
	b, err := w.Step(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Reorg == nil || *b.Reorg > beforeRevoke.Number.Uint64()+1 {
		t.Fatalf("batch after the reorg: %+v", b)
	}
	if b.From != *b.Reorg {
		t.Fatalf("after a reorg from %d the watcher read from %d", *b.Reorg, b.From)
	}
}

func planBinding(p chain.Plan) contracts.PlanManagerPlan {
	return contracts.PlanManagerPlan{Payer: p.Payer, Payee: p.Payee, Token: p.Token, CapPerPeriod: p.CapPerPeriod,
		Period: p.Period, Start: p.Start, End: p.End, Salt: p.Salt}
}

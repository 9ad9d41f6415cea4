package relayer

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The simulated chain's client is a chain.Backend too.
var _ chain.Backend = simulated.Client(nil)

// env is a simulated chain (nothing mocked: its EVM runs TestUSDC and
// PlanManager), a migrated database and a relayer. The payer and the
// merchant hold no ETH at all.
type env struct {
	t        testing.TB
	ctx      context.Context
	sim      *simulated.Backend
	c        simulated.Client
	db       *store.DB
	chainID  *big.Int
	deployer *ecdsa.PrivateKey
	relayKey *ecdsa.PrivateKey
	payer    *ecdsa.PrivateKey
	merchant *ecdsa.PrivateKey
	token    *chain.Token
	plans    *chain.PlanManager
	tok      *contracts.TestUSDC
	r        *Relayer
}

func newEnv(t testing.TB, cfg Config, simOpts ...func(*node.Config, *ethconfig.Config)) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), deployer: newKey(t), relayKey: newKey(t), payer: newKey(t), merchant: newKey(t)}
	eth := new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18))
	e.sim = simulated.NewBackend(types.GenesisAlloc{
		addr(e.deployer): {Balance: eth}, addr(e.relayKey): {Balance: eth},
	}, simOpts...)
	t.Cleanup(func() { e.sim.Close() })
	e.c = e.sim.Client()
	var err error
	if e.chainID, err = e.c.ChainID(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.tok = contracts.NewTestUSDC()
	usdc := e.deploy(contracts.TestUSDCMetaData.Bin, e.tok.PackConstructor("USD Coin", "USDC", "2"))
	pm := e.deploy(contracts.PlanManagerMetaData.Bin, contracts.NewPlanManager().PackConstructor(addr(e.relayKey)))
	e.token = chain.NewToken(e.c, usdc)
	e.plans = chain.NewPlanManager(e.c, pm)
	e.mint(addr(e.payer), 1_000_000_000) // 1,000 USDC

	if e.db, err = store.Open(e.ctx, testdb.New(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	if e.r, err = New(e.ctx, e.db, e.c, e.relayKey, cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func (e *env) deploy(bin string, args []byte) common.Address {
	e.t.Helper()
	opts := bind.NewKeyedTransactor(e.deployer, e.chainID)
	opts.GasTipCap = big.NewInt(10e9) // above any builder minimum a test sets
	a, _, err := bind.DeployContract(opts, common.FromHex(bin), e.c, args)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
	return a
}

// sendAs sends a transaction from k (which needs ETH) and mines it.
func (e *env) sendAs(k *ecdsa.PrivateKey, to common.Address, data []byte, tip *big.Int) *types.Transaction {
	e.t.Helper()
	tx := e.signAs(k, to, data, tip)
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
	return tx
}

func (e *env) signAs(k *ecdsa.PrivateKey, to common.Address, data []byte, tip *big.Int) *types.Transaction {
	e.t.Helper()
	nonce, err := e.c.PendingNonceAt(e.ctx, addr(k))
	if err != nil {
		e.t.Fatal(err)
	}
	head, err := e.c.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), tip), Gas: 500_000, To: &to, Data: data}),
		types.LatestSignerForChainID(e.chainID), k)
	if err != nil {
		e.t.Fatal(err)
	}
	return tx
}

func (e *env) mint(to common.Address, amount int64) {
	e.t.Helper()
	e.sendAs(e.deployer, e.token.Address, e.tok.PackMint(to, big.NewInt(amount)), big.NewInt(10e9))
	e.sim.Commit()
}

func (e *env) usdc(a common.Address) int64 {
	e.t.Helper()
	v, err := e.token.BalanceOf(e.ctx, a)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Int64()
}

func (e *env) eth(a common.Address) *big.Int {
	e.t.Helper()
	v, err := e.c.BalanceAt(e.ctx, a, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) head() *types.Header {
	e.t.Helper()
	h, err := e.c.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// authorize returns the payer's signed authorization of value to `to`
// under nonce id, valid for an hour from the latest block.
func (e *env) authorize(k *ecdsa.PrivateKey, to common.Address, value int64, id string) chain.TransferAuthorization {
	e.t.Helper()
	d, err := e.token.Domain(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	a := chain.TransferAuthorization{From: addr(k), To: to, Value: big.NewInt(value), ValidAfter: new(big.Int),
		ValidBefore: new(big.Int).SetUint64(e.head().Time + 3600), Nonce: chain.NonceFor(id)}
	if a.Signature, err = chain.SignTypedData(k, chain.TransferTypedData(d, a)); err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) expect(a chain.TransferAuthorization) chain.Expect {
	return chain.Expect{To: a.To, Value: a.Value, Nonce: a.Nonce, Relayer: e.r.Address()}
}

// settle steps the relayer and mines a block until key's settlement is
// final, and returns every state it went through.
func (e *env) settle(key string) (Settlement, []State) {
	e.t.Helper()
	var seen []State
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if _, err := e.r.Step(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		s, err := e.r.Status(e.ctx, key)
		if err != nil {
			e.t.Fatal(err)
		}
		if len(seen) == 0 || seen[len(seen)-1] != s.State {
			seen = append(seen, s.State)
		}
		if s.State.Final() {
			return s, seen
		}
		e.sim.Commit()
	}
	e.t.Fatalf("settlement %s not final after 30s: %v", key, seen)
	return Settlement{}, nil
}

func (e *env) receipt(h common.Hash) *types.Receipt {
	e.t.Helper()
	r, err := e.c.TransactionReceipt(e.ctx, h)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) relayerNonce() uint64 {
	e.t.Helper()
	n, err := e.c.PendingNonceAt(e.ctx, e.r.Address())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) countIntents() int {
	e.t.Helper()
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM chain_intents`); err != nil {
		e.t.Fatal(err)
	}
	return n
}

var _ = ethereum.NotFound

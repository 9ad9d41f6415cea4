package contracts_test

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
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
)

// env is a simulated chain with TestUSDC and a PlanManager whose operator
// is op.
type env struct {
	t       *testing.T
	ctx     context.Context
	sim     *simulated.Backend
	c       simulated.Client
	chainID *big.Int
	op      *ecdsa.PrivateKey // deployer, minter and PlanManager operator
	payer   *ecdsa.PrivateKey // has ETH here, to call revoke itself
	other   *ecdsa.PrivateKey
	usdc    common.Address
	pm      common.Address
	tok     *contracts.TestUSDC
	plans   *contracts.PlanManager
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), op: key(t), payer: key(t), other: key(t)}
	eth := new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	e.sim = simulated.NewBackend(types.GenesisAlloc{
		addr(e.op): {Balance: eth}, addr(e.payer): {Balance: eth}, addr(e.other): {Balance: eth},
	})
	t.Cleanup(func() { e.sim.Close() })
	e.c = e.sim.Client()
	var err error
	if e.chainID, err = e.c.ChainID(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.tok, e.plans = contracts.NewTestUSDC(), contracts.NewPlanManager()
	e.usdc = e.deploy(contracts.TestUSDCMetaData.Bin, e.tok.PackConstructor("USD Coin", "USDC", "2"))
	e.pm = e.deploy(contracts.PlanManagerMetaData.Bin, e.plans.PackConstructor(addr(e.op)))
	return e
}

func key(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func (e *env) deploy(bin string, args []byte) common.Address {
	e.t.Helper()
	a, tx, err := bind.DeployContract(bind.NewKeyedTransactor(e.op, e.chainID), common.FromHex(bin), e.c, args)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
	e.mustSucceed(tx)
	return a
}

// send sends data to `to` from k with a fixed gas limit (so a reverting
// call is mined, not refused at estimation) and mines it.
func (e *env) send(k *ecdsa.PrivateKey, to common.Address, data []byte) *types.Receipt {
	e.t.Helper()
	nonce, err := e.c.PendingNonceAt(e.ctx, addr(k))
	if err != nil {
		e.t.Fatal(err)
	}
	head, err := e.c.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	tip := big.NewInt(1e9)
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip), Gas: 1_000_000, To: &to, Data: data}),
		types.LatestSignerForChainID(e.chainID), k)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
	r, err := e.c.TransactionReceipt(e.ctx, tx.Hash())
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) mustSucceed(tx *types.Transaction) *types.Receipt {
	e.t.Helper()
	r, err := e.c.TransactionReceipt(e.ctx, tx.Hash())
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Status != 1 {
		e.t.Fatalf("transaction %s reverted", tx.Hash())
	}
	return r
}

// ok sends and requires success.
func (e *env) ok(k *ecdsa.PrivateKey, to common.Address, data []byte) *types.Receipt {
	e.t.Helper()
	r := e.send(k, to, data)
	if r.Status != 1 {
		reason := e.revert(k, to, data)
		e.t.Fatalf("call reverted: %s", reason)
	}
	return r
}

// revert runs data as an eth_call from k and returns its revert string ("" if
// it does not revert).
func (e *env) revert(k *ecdsa.PrivateKey, to common.Address, data []byte) string {
	e.t.Helper()
	_, err := e.c.CallContract(e.ctx, ethereum.CallMsg{From: addr(k), To: &to, Data: data}, nil)
	if err == nil {
		return ""
	}
	reason, ok := chain.RevertReason(err)
	if !ok {
		e.t.Fatalf("call failed without a revert reason: %v", err)
	}
	return reason
}

// mustRevert checks that data from k reverts with want, both as an eth_call
// and as a mined transaction (status 0), and that nothing changed.
func (e *env) mustRevert(k *ecdsa.PrivateKey, to common.Address, data []byte, want string) {
	e.t.Helper()
	if got := e.revert(k, to, data); got != want {
		e.t.Fatalf("revert = %q, want %q", got, want)
	}
	if r := e.send(k, to, data); r.Status != 0 {
		e.t.Fatalf("transaction expected to revert with %q succeeded", want)
	}
}

func (e *env) mint(to common.Address, amount int64) {
	e.t.Helper()
	e.ok(e.op, e.usdc, e.tok.PackMint(to, big.NewInt(amount)))
}

func (e *env) balance(a common.Address) *big.Int {
	e.t.Helper()
	out, err := e.c.CallContract(e.ctx, ethereum.CallMsg{To: &e.usdc, Data: e.tok.PackBalanceOf(a)}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	v, err := e.tok.UnpackBalanceOf(out)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) now() uint64 {
	e.t.Helper()
	h, err := e.c.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Time
}

// advance moves the chain's time forward by d in a new empty block.
func (e *env) advance(d time.Duration) { e.t.Helper(); chaintest.AdjustTime(e.t, e.sim, d) }

func (e *env) domain(verifying common.Address, name, version string) chain.Domain {
	return chain.Domain{Name: name, Version: version, ChainID: e.chainID, VerifyingContract: verifying}
}

func callMsg(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: data}
}

// revertCreate runs a contract creation as an eth_call and returns its
// revert string.
func (e *env) revertCreate(k *ecdsa.PrivateKey, code []byte) string {
	e.t.Helper()
	_, err := e.c.CallContract(e.ctx, ethereum.CallMsg{From: addr(k), Data: code}, nil)
	if err == nil {
		return ""
	}
	reason, _ := chain.RevertReason(err)
	return reason
}

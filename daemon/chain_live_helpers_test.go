package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// liveEnv is a daemon whose live mode settles on an in-process chain
// (ethclient/simulated: a real EVM runs TestUSDC and PlanManager), with a
// merchant whose wallet is on file, a payer holding USDC and no ETH, and
// someone with ETH to relay payers' own transactions (revocations,
// cancellations).
type liveEnv struct {
	*bundle
	t                                   *testing.T
	ctx                                 context.Context
	sim                                 *simulated.Backend
	c                                   simulated.Client
	chainID                             *big.Int
	deployer, relayKey, payer, merchant *ecdsa.PrivateKey
	token                               *chain.Token
	tok                                 *contracts.TestUSDC
	pm                                  *chain.PlanManager
	merchantID, key                     string
	api                                 *client.Client
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func newLiveEnv(t *testing.T, confirmations uint64) *liveEnv {
	t.Helper()
	e := &liveEnv{t: t, ctx: context.Background(), deployer: newKey(t), relayKey: newKey(t), payer: newKey(t), merchant: newKey(t)}
	eth := new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18))
	e.sim = simulated.NewBackend(types.GenesisAlloc{addr(e.deployer): {Balance: eth}, addr(e.relayKey): {Balance: eth}})
	t.Cleanup(func() { e.sim.Close() })
	e.c = e.sim.Client()
	var err error
	if e.chainID, err = e.c.ChainID(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.tok = contracts.NewTestUSDC()
	usdc := e.deploy(contracts.TestUSDCMetaData.Bin, e.tok.PackConstructor("USD Coin", "USDC", "2"))
	pm := e.deploy(contracts.PlanManagerMetaData.Bin, contracts.NewPlanManager().PackConstructor(addr(e.relayKey)))
	e.token, e.pm = chain.NewToken(e.c, usdc), chain.NewPlanManager(e.c, pm)
	e.mint(addr(e.payer), 1_000_000_000)
	e.bundle = setup(t, func(c *daemon.Config) {
		// The job is stepped by the test (Drain), not by the clock.
		c.Chain = daemon.ChainConfig{Backend: e.c, RelayerKey: e.relayKey, USDCAddress: usdc.Hex(), PlanManager: pm.Hex(),
			Confirmations: confirmations, Interval: time.Hour}
	})
	e.merchantID = e.bundle.merchant("live shop")
	_, e.key = e.bundle.key(e.merchantID, tenant.Live)
	e.api = e.bundle.client(e.key)
	e.setWallet()
	return e
}

func (e *liveEnv) deploy(bin string, args []byte) common.Address {
	e.t.Helper()
	opts := bind.NewKeyedTransactor(e.deployer, e.chainID)
	a, _, err := bind.DeployContract(opts, common.FromHex(bin), e.c, args)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
	return a
}

// sendAs sends a transaction from k (which needs ETH); the next Commit
// mines it.
func (e *liveEnv) sendAs(k *ecdsa.PrivateKey, to common.Address, data []byte) {
	e.t.Helper()
	nonce, err := e.c.PendingNonceAt(e.ctx, addr(k))
	if err != nil {
		e.t.Fatal(err)
	}
	head := e.head()
	tip := big.NewInt(50e9)
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), tip), Gas: 500_000, To: &to, Data: data}),
		types.LatestSignerForChainID(e.chainID), k)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *liveEnv) mint(to common.Address, amount int64) {
	e.t.Helper()
	e.sendAs(e.deployer, e.token.Address, e.tok.PackMint(to, big.NewInt(amount)))
	e.sim.Commit()
}

func (e *liveEnv) head() *types.Header {
	e.t.Helper()
	h, err := e.c.HeaderByNumber(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *liveEnv) usdc(a common.Address) int64 {
	e.t.Helper()
	v, err := e.token.BalanceOf(e.ctx, a)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Int64()
}

func (e *liveEnv) eth(a common.Address) *big.Int {
	e.t.Helper()
	v, err := e.c.BalanceAt(e.ctx, a, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *liveEnv) relayerNonce() uint64 {
	e.t.Helper()
	n, err := e.c.PendingNonceAt(e.ctx, addr(e.relayKey))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// setWallet puts the merchant's wallet on file for live mode, as `admin
// wallet set` does: its signature over a challenge.
func (e *liveEnv) setWallet() {
	e.t.Helper()
	s := tenant.Scope{MerchantID: e.merchantID, Mode: tenant.Live}
	c, err := wallet.NewChallenge(e.ctx, e.db, s, addr(e.merchant).Hex(), time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(c.Message)), e.merchant)
	if err != nil {
		e.t.Fatal(err)
	}
	sig[64] += 27
	if _, err := wallet.Set(e.ctx, e.db, s, c.Address, "0x"+common.Bytes2Hex(sig), time.Now()); err != nil {
		e.t.Fatal(err)
	}
}

// step mines a block and runs the settlement job once.
func (e *liveEnv) step() {
	e.t.Helper()
	e.sim.Commit()
	e.drain()
}

func (e *liveEnv) drain() {
	e.t.Helper()
	if err := e.d.Jobs().Drain(e.ctx, "chain-settlement", time.Now()); err != nil {
		e.t.Fatal(err)
	}
}

// terms asks the checkout for what payer signs.
func (e *liveEnv) terms(id string, payer common.Address) map[string]json.RawMessage {
	e.t.Helper()
	st, _, body := e.raw("GET", "/checkout/"+id+"/authorization?payer="+url.QueryEscape(payer.Hex()), "", "")
	if st != 200 {
		e.t.Fatalf("terms of %s: %d %s", id, st, body)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// signTerms signs typed data as a wallet's eth_signTypedData_v4 does.
func signTerms(t *testing.T, k *ecdsa.PrivateKey, raw json.RawMessage) (apitypes.TypedData, string) {
	t.Helper()
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil {
		t.Fatal(err)
	}
	sig, err := chain.SignTypedData(k, td)
	if err != nil {
		t.Fatal(err)
	}
	return td, "0x" + common.Bytes2Hex(sig)
}

// invoiceAuthorization is the body the page posts for an invoice.
func (e *liveEnv) invoiceAuthorization(k *ecdsa.PrivateKey, invoiceID string) string {
	e.t.Helper()
	td, sig := signTerms(e.t, k, e.terms(invoiceID, addr(k))["typed_data"])
	m := map[string]any{}
	for k, v := range td.Message {
		m[k] = v
	}
	m["signature"] = sig
	b, _ := json.Marshal(m)
	return string(b)
}

// authorize posts a body to the authorization endpoint.
func (e *liveEnv) authorize(id, body string) (int, map[string]any) {
	e.t.Helper()
	st, _, out := e.raw("POST", "/checkout/"+id+"/authorization", "", body)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("POST authorization: %d %s", st, out)
	}
	return st, m
}

// events returns the live merchant's events of type typ.
func (e *liveEnv) events(typ string) []client.Event {
	e.t.Helper()
	l, err := e.api.ListEvents(e.ctx, client.ListParams{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []client.Event
	for _, ev := range l.Data {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// until steps (mining a block and draining the job) until cond holds,
// and returns how many blocks it took.
func (e *liveEnv) until(what string, cond func() bool) int {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		if cond() {
			return n
		}
		e.step()
	}
	e.t.Fatalf("%s: not after 30s", what)
	return 0
}

func errorMessage(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		msg, _ := e["message"].(string)
		return s + ": " + msg
	}
	return ""
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func paymentsAmount(v int64) money.Amount { return money.Amount(v) }

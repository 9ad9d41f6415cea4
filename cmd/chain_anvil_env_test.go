package cmd

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// anvilLive is live mode set up against Anvil as an operator would: TestUSDC
// deployed, the PlanManager deployed by admin chain deploy-plan-manager, a
// merchant with a live key and its wallet set with verification on the
// chain, and `tollgate serve --chain-rpc-url` running over it.
type anvilLive struct {
	t           *testing.T
	ctx         context.Context
	node        *anvil
	dir         string
	relayerFile string
	deployer    *ecdsa.PrivateKey
	tok         *contracts.TestUSDC
	usdc        common.Address
	token       *chain.Token
	pm          string // the PlanManager's address
	merchant    *ecdsa.PrivateKey
	maddr       string // the merchant's wallet
	db          string // database URL
	merchantID  string
	key         string // the live secret key
	listen      string
	confs       string
	serveArgs   []string // more flags for serve
	srv         *server
	h           liveHTTP
}

// newAnvilLive sets live mode up on a fresh Anvil and starts serve on it
// with the given confirmations; serve's node URL is rpcURL(node) when
// rpcURL is not nil (a proxy in front of the node), else the node's.
func newAnvilLive(t *testing.T, confirmations string, rpcURL func(*anvil) string, serveArgs ...string) *anvilLive {
	t.Helper()
	e := &anvilLive{t: t, ctx: context.Background(), node: startAnvil(t), dir: t.TempDir(), confs: confirmations, serveArgs: serveArgs}
	ctx := e.ctx
	e.relayerFile = filepath.Join(e.dir, "relayer.key")
	if err := os.WriteFile(e.relayerFile, []byte("0x"+anvilRelayerKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.deployer = hexKey(t, anvilDeployerKey)
	id, _ := e.node.eth.ChainID(ctx)
	opts := bind.NewKeyedTransactor(e.deployer, id)
	e.tok = contracts.NewTestUSDC()
	usdc, tx, err := bind.DeployContract(opts, common.FromHex(contracts.TestUSDCMetaData.Bin), e.node.eth, e.tok.PackConstructor("USD Coin", "USDC", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitDeployed(ctx, e.node.eth, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	e.usdc, e.token = usdc, chain.NewToken(e.node.eth, usdc)
	code, out, errOut := run("admin", "chain", "deploy-plan-manager", "--chain-rpc-url", e.node.url, "--relayer-key-file", e.relayerFile,
		"--deployer-key-file", writeKey(t, e.dir, anvilDeployerKey), "--json")
	if code != 0 {
		t.Fatalf("deploy-plan-manager: %d %s", code, errOut)
	}
	var pm struct{ Address, Operator string }
	if err := json.Unmarshal([]byte(out), &pm); err != nil || pm.Operator != crypto.PubkeyToAddress(hexKey(t, anvilRelayerKey).PublicKey).Hex() {
		t.Fatalf("deploy output %q: %v", out, err)
	}
	e.pm = pm.Address

	e.db = testdb.New(t)
	code, out, _ = run("admin", "merchant", "create", "--name", "Anvil shop", "--json", "--database-url", e.db)
	var m struct{ ID string }
	_ = json.Unmarshal([]byte(out), &m)
	code2, out2, _ := run("admin", "key", "create", "--merchant", m.ID, "--mode", "live", "--json", "--database-url", e.db)
	var k struct{ Key string }
	_ = json.Unmarshal([]byte(out2), &k)
	if code != 0 || code2 != 0 || k.Key == "" {
		t.Fatal("merchant or key not created")
	}
	e.merchantID, e.key = m.ID, k.Key
	e.merchant = newTestKey(t)
	e.maddr = crypto.PubkeyToAddress(e.merchant.PublicKey).Hex()
	_, out, _ = run("admin", "wallet", "challenge", "--merchant", m.ID, "--mode", "live", "--address", e.maddr, "--json", "--database-url", e.db)
	var ch struct{ Message string }
	_ = json.Unmarshal([]byte(out), &ch)
	sig, _ := crypto.Sign(accounts.TextHash([]byte(ch.Message)), e.merchant)
	sig[64] += 27
	if code, _, errOut := run("admin", "wallet", "set", "--merchant", m.ID, "--mode", "live", "--address", e.maddr, "--signature", hexutil.Encode(sig),
		"--chain-rpc-url", e.node.url, "--database-url", e.db); code != 0 {
		t.Fatalf("wallet set: %s", errOut)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	e.listen = ln.Addr().String()
	ln.Close()
	e.h = liveHTTP{t: t, base: "http://" + e.listen, sk: e.key}
	url := e.node.url
	if rpcURL != nil {
		url = rpcURL(e.node)
	}
	e.startServe(url)
	t.Cleanup(func() {
		if e.srv != nil {
			e.srv.stop(t)
		}
	})
	return e
}

// startServe starts `tollgate serve` on the node at rpcURL and waits until
// it is ready.
func (e *anvilLive) startServe(rpcURL string) {
	e.t.Helper()
	e.srv = startServe(e.t, append([]string{"--database-url", e.db, "--listen", e.listen, "--chain-rpc-url", rpcURL, "--usdc-address", e.usdc.Hex(),
		"--plan-manager-address", e.pm, "--relayer-key-file", e.relayerFile, "--confirmations", e.confs,
		// The waits poll the event list faster than its budget.
		"--rate-limits=false"}, e.serveArgs...)...)
	srv := e.srv
	waitUntil(e.t, "serve", 30*time.Second, func() bool {
		select {
		case code := <-srv.done:
			e.srv = nil
			e.t.Fatalf("serve exited %d: %s", code, srv.stderr.String())
		default:
		}
		return readyz(e.listen) == 200
	})
}

// stopServe stops serve (all its jobs, the relayer's included).
func (e *anvilLive) stopServe() {
	e.t.Helper()
	if code := e.srv.stop(e.t); code != 0 {
		e.t.Fatalf("serve exited %d: %s", code, e.srv.stderr.String())
	}
	e.srv = nil
}

// chainArgs are the flags admin commands that talk to the chain take.
func (e *anvilLive) chainArgs() []string {
	return []string{"--database-url", e.db, "--chain-rpc-url", e.node.url, "--usdc-address", e.usdc.Hex(), "--plan-manager-address", e.pm,
		"--relayer-key-file", e.relayerFile}
}

// mint gives to amount USDC base units.
func (e *anvilLive) mint(to common.Address, amount int64) {
	e.t.Helper()
	send(e.t, e.node.eth, e.deployer, e.usdc, e.tok.PackMint(to, big.NewInt(amount)))
}

// usdcOf is a USDC balance in base units.
func (e *anvilLive) usdcOf(a common.Address) int64 {
	e.t.Helper()
	v, err := e.token.BalanceOf(e.ctx, a)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Int64()
}

// ethOf is an ETH balance in wei.
func (e *anvilLive) ethOf(a common.Address) *big.Int {
	e.t.Helper()
	v, err := e.node.eth.BalanceAt(e.ctx, a, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// relayerNonce is the relayer's next nonce as the node counts it (pending
// transactions included).
func (e *anvilLive) relayerNonce() uint64 {
	e.t.Helper()
	n, err := e.node.eth.PendingNonceAt(e.ctx, crypto.PubkeyToAddress(hexKey(e.t, anvilRelayerKey).PublicKey))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

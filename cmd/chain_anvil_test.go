package cmd

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// anvilBin finds Anvil: the copy pinned by testdata/anvil/package-lock.json
// (.ci/run installs it with npm ci), else one on PATH. Without it the test
// is skipped, never under CI.
func anvilBin(t *testing.T) string {
	t.Helper()
	pinned := filepath.Join("testdata", "anvil", "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil")
	if _, err := os.Stat(pinned); err == nil {
		return pinned
	}
	if p, err := exec.LookPath("anvil"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("anvil not found: run npm ci in cmd/testdata/anvil")
	}
	t.Skip("anvil not found (npm ci in cmd/testdata/anvil)")
	return ""
}

// anvil is a real JSON-RPC node on loopback.
type anvil struct {
	t   *testing.T
	url string
	rpc *rpc.Client
	eth *ethclient.Client
}

// Anvil's first two dev accounts (its well-known test mnemonic): the
// deployer and the relayer.
const (
	anvilDeployerKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	anvilRelayerKey  = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
)

func startAnvil(t *testing.T) *anvil { return startAnvilWith(t, "--chain-id", "31337") }

// startAnvilWith starts Anvil on a free loopback port with more flags
// (a --chain-id among them: Anvil's default is 31337).
func startAnvilWith(t *testing.T, args ...string) *anvil {
	t.Helper()
	bin := anvilBin(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, append([]string{"--host", "127.0.0.1", "--port", fmt.Sprint(port), "--silent"}, args...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	a := &anvil{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := rpc.Dial(a.url); err == nil {
			var id hexutil.Big
			if err := c.Call(&id, "eth_chainId"); err == nil {
				a.rpc, a.eth = c, ethclient.NewClient(c)
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("anvil did not answer in 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(a.rpc.Close)
	return a
}

func (a *anvil) mine() {
	a.t.Helper()
	if err := a.rpc.Call(nil, "evm_mine"); err != nil {
		a.t.Fatal(err)
	}
}

func hexKey(t *testing.T, s string) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// liveHTTP is the daemon as the page and a merchant reach it.
type liveHTTP struct {
	t        *testing.T
	base, sk string
}

func (h liveHTTP) do(method, path, key, body string) (int, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.base+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// pay signs what the checkout asks payer to sign for the invoice, and
// returns the body the page posts.
func (h liveHTTP) authorization(payer *ecdsa.PrivateKey, invoiceID string) string {
	h.t.Helper()
	code, terms := h.do("GET", "/checkout/"+invoiceID+"/authorization?payer="+crypto.PubkeyToAddress(payer.PublicKey).Hex(), "", "")
	if code != 200 {
		h.t.Fatalf("terms: %d %v", code, terms)
	}
	raw, _ := json.Marshal(terms["typed_data"])
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil {
		h.t.Fatal(err)
	}
	sig, err := chain.SignTypedData(payer, td)
	if err != nil {
		h.t.Fatal(err)
	}
	m := map[string]any{"signature": hexutil.Encode(sig)}
	for k, v := range td.Message {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func (h liveHTTP) events(typ string) int {
	h.t.Helper()
	code, l := h.do("GET", "/v1/events?limit=100", h.sk, "")
	if code != 200 {
		h.t.Fatalf("GET /v1/events: %d %v", code, l)
	}
	n := 0
	data, _ := l["data"].([]any)
	for _, ev := range data {
		if ev.(map[string]any)["type"] == typ {
			n++
		}
	}
	return n
}

// TestAnvilLiveMode runs live mode against a real JSON-RPC node over HTTP:
// the PlanManager deployed by admin chain deploy-plan-manager, the wallet
// set with verification on the chain, `tollgate serve --chain-rpc-url`
// settling a gasless invoice after its confirmations (once), a replay and
// an unfunded payer refused, admin refund from the merchant's wallet (typed
// data printed and signed elsewhere; a hot key), admin chain status and /metrics reporting the
// relayer, and anvil_reorg replacing the block of a submitted payment with
// the payer's cancellation: that invoice is never paid.
func TestAnvilLiveMode(t *testing.T) {
	t.Parallel()
	e := newAnvilLive(t, "2", nil)
	node, ctx, h, deployer, usdc, tok, token, maddr := e.node, e.ctx, e.h, e.deployer, e.usdc, e.tok, e.token, e.maddr
	payer, poor, merchant := hexKey(t, "0000000000000000000000000000000000000000000000000000000000001001"), newTestKey(t), e.merchant
	e.mint(crypto.PubkeyToAddress(payer.PublicKey), 100_000_000)

	// A gasless invoice, paid once after two confirmations.
	_, inv := h.do("POST", "/v1/invoices", e.key, `{"amount":"12000000","description":"Anvil invoice"}`)
	invID, _ := inv["id"].(string)
	body := h.authorization(payer, invID)
	if code, res := h.do("POST", "/checkout/"+invID+"/authorization", "", body); code != 202 {
		t.Fatalf("authorization: %d %v", code, res)
	}
	waitUntil(t, "invoice.paid", 60*time.Second, func() bool {
		node.mine()
		_, got := h.do("GET", "/v1/invoices/"+invID, e.key, "")
		return got["status"] == "paid"
	})
	if bal, _ := node.eth.BalanceAt(ctx, crypto.PubkeyToAddress(payer.PublicKey), nil); bal.Sign() != 0 {
		t.Fatalf("the payer spent ETH: %v", bal)
	}
	if got, _ := token.BalanceOf(ctx, common.HexToAddress(maddr)); got.Int64() != 12_000_000 {
		t.Fatalf("merchant has %v", got)
	}
	if code, res := h.do("POST", "/checkout/"+invID+"/authorization", "", body); code != 409 {
		t.Fatalf("replay: %d %v", code, res)
	}
	_, inv2 := h.do("POST", "/v1/invoices", e.key, `{"amount":"1000000","description":"Unfunded"}`)
	if code, res := h.do("POST", "/checkout/"+inv2["id"].(string)+"/authorization", "", h.authorization(poor, inv2["id"].(string))); code != 402 ||
		!strings.Contains(fmt.Sprint(res), "insufficient_funds") {
		t.Fatalf("unfunded payer: %d %v", code, res)
	}

	// Refunds from the merchant's wallet: the typed data printed, signed
	// elsewhere (by ethers, then by viem, as wallets built on them would)
	// and passed back; then a hot refund key.
	_, paidInv := h.do("GET", "/v1/invoices/"+invID, e.key, "")
	payID, _ := paidInv["payment_id"].(string)
	chainArgs := e.chainArgs()
	sg := chaintest.StartSigners(t, chaintest.WalletDir(t, filepath.Join("..", "daemon", "testdata", "wallet")))
	before, _ := token.BalanceOf(ctx, crypto.PubkeyToAddress(payer.PublicKey))
	for _, signer := range chaintest.SignerNames {
		code, out, errOut := run(append([]string{"admin", "refund", payID, "--amount", "1000000"}, chainArgs...)...)
		var td apitypes.TypedData
		if err := json.Unmarshal([]byte(out), &td); code != 0 || err != nil || td.PrimaryType != "TransferWithAuthorization" || strings.Contains(out, "salt") {
			t.Fatalf("refund typed data: %d %q %s", code, out, errOut)
		}
		rsig := sg.MustSign(signer, merchant, json.RawMessage(out))
		code, out, errOut = run(append([]string{"admin", "refund", payID, "--amount", "1000000", "--signature", rsig,
			"--valid-before", fmt.Sprint(td.Message["validBefore"]), "--json"}, chainArgs...)...)
		if code != 0 || !strings.Contains(out, `"status": "pending"`) {
			t.Fatalf("refund with --signature by %s: %d %q %s", signer, code, out, errOut)
		}
	}
	code, out, errOut := run(append([]string{"admin", "refund", payID, "--amount", "3000000", "--key-file",
		writeKey(t, e.dir, hexutil.Encode(crypto.FromECDSA(merchant))[2:]), "--json"}, chainArgs...)...)
	if code != 0 || !strings.Contains(out, `"status": "pending"`) {
		t.Fatalf("refund with --key-file: %d %q %s", code, out, errOut)
	}
	waitUntil(t, "refund.succeeded three times", 60*time.Second, func() bool {
		node.mine()
		return h.events("refund.succeeded") == 3
	})
	if after, _ := token.BalanceOf(ctx, crypto.PubkeyToAddress(payer.PublicKey)); after.Int64()-before.Int64() != 5_000_000 {
		t.Fatalf("the payer got %d back", after.Int64()-before.Int64())
	}

	// The operator's view.
	code, out, errOut = run(append([]string{"admin", "chain", "status", "--json"}, chainArgs...)...)
	var st struct {
		ChainID uint64 `json:"chain_id"`
		Pending *int   `json:"pending_transactions"`
		Balance string `json:"relayer_balance_wei"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.ChainID != 31337 || st.Pending == nil || st.Balance == "" {
		t.Fatalf("chain status: %d %q %s", code, out, errOut)
	}
	resp, err := http.Get(h.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"tollgate_relayer_balance_wei{", "tollgate_relayer_pending_transactions{"} {
		if !strings.Contains(string(metrics), want) {
			t.Fatalf("/metrics lacks %s", want)
		}
	}

	// anvil_reorg: the payment's block is replaced by one carrying the
	// payer's cancellation of the same authorization.
	_, inv3 := h.do("POST", "/v1/invoices", e.key, `{"amount":"5000000","description":"Reorganised"}`)
	inv3ID := inv3["id"].(string)
	body3 := h.authorization(payer, inv3ID)
	if code, res := h.do("POST", "/checkout/"+inv3ID+"/authorization", "", body3); code != 202 {
		t.Fatalf("authorization: %d %v", code, res)
	}
	var a struct{ Nonce string }
	_ = json.Unmarshal([]byte(body3), &a)
	dom, _ := token.Domain(ctx)
	csig, _ := chain.SignTypedData(payer, chain.CancelTypedData(dom, crypto.PubkeyToAddress(payer.PublicKey), common.HexToHash(a.Nonce)))
	cancel := map[string]any{"from": crypto.PubkeyToAddress(deployer.PublicKey).Hex(), "to": usdc.Hex(),
		"data": hexutil.Encode(tok.PackCancelAuthorization0(crypto.PubkeyToAddress(payer.PublicKey), common.HexToHash(a.Nonce), csig))}
	if err := node.rpc.Call(nil, "anvil_reorg", 1, []any{[]any{cancel, 0}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reorganised payment to fail", 60*time.Second, func() bool {
		node.mine()
		_, page := httpGet(h.base + "/checkout/" + inv3ID)
		return strings.Contains(page, `id="live-error"`)
	})
	for range 3 {
		node.mine()
	}
	if _, got := h.do("GET", "/v1/invoices/"+inv3ID, e.key, ""); got["status"] != "open" || h.events("invoice.paid") != 1 {
		t.Fatalf("after the reorg: invoice %v, %d invoice.paid", got["status"], h.events("invoice.paid"))
	}
	if got, _ := token.BalanceOf(ctx, common.HexToAddress(maddr)); got.Int64() != 12_000_000-5_000_000 {
		t.Fatalf("merchant has %v after the reorg (12 USDC paid, 5 refunded)", got)
	}
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeKey(t *testing.T, dir, hex string) string {
	p := filepath.Join(dir, "k"+hex[:6])
	if err := os.WriteFile(p, []byte(hex), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// send sends a call from k and waits until it is mined.
func send(t *testing.T, c *ethclient.Client, k *ecdsa.PrivateKey, to common.Address, data []byte) {
	t.Helper()
	ctx := context.Background()
	id, _ := c.ChainID(ctx)
	nonce, err := c.PendingNonceAt(ctx, crypto.PubkeyToAddress(k.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tip := big.NewInt(1e9)
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), tip), Gas: 300_000, To: &to, Data: data}),
		types.LatestSignerForChainID(id), k)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(ctx, c, tx.Hash()); err != nil {
		t.Fatal(err)
	}
}

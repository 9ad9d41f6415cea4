package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/store"
)

// What rpcProxy does with eth_sendRawTransaction.
const (
	proxyPass = iota // forwards it
	proxyDrop        // answers an error without forwarding it: the broadcast is lost
	proxyLose        // forwards it, then answers an error: the node has it, the sender does not know
)

// rpcProxy stands between serve and the node, forwarding JSON-RPC over
// HTTP, and loses broadcasts when told to.
type rpcProxy struct {
	url  string
	mode atomic.Int32
	hits atomic.Int32 // broadcasts it dropped or lost the answer of
}

func startRPCProxy(t *testing.T, target string) *rpcProxy {
	t.Helper()
	p := &rpcProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mode := p.mode.Load()
		if mode != proxyPass && bytes.Contains(body, []byte(`"eth_sendRawTransaction"`)) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(body, &req)
			if mode == proxyLose {
				if resp, err := http.Post(target, "application/json", bytes.NewReader(body)); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			p.hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32000,"message":"test proxy: connection lost"}}`))
			return
		}
		resp, err := http.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// TestAnvilRelayerRestart stops serve with a payment's transaction signed
// and stored but its broadcast lost (the node never saw it): the restarted
// serve broadcasts the stored bytes (nothing is signed again) and the
// invoice is paid once. Then a broadcast whose answer is lost (the node
// mined it, the relayer was told it failed), serve stopped and restarted:
// the transaction is recognised, paid once, nothing sent twice.
func TestAnvilRelayerRestart(t *testing.T) {
	t.Parallel()
	var proxy *rpcProxy
	e := newAnvilLive(t, "1", func(n *anvil) string {
		proxy = startRPCProxy(t, n.url)
		return proxy.url
	})
	db, err := store.Open(e.ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, merchant := e.h, common.HexToAddress(e.maddr)
	payer := newTestKey(t)
	e.mint(keyAddr(payer), 50_000_000)
	paid := func(invID string) bool {
		_, got := h.do("GET", "/v1/invoices/"+invID, e.key, "")
		return got["status"] == "paid"
	}
	signed := func() int {
		var n int
		if err := db.GetContext(e.ctx, &n, `SELECT count(*) FROM chain_transactions`); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The broadcast is lost; serve stops with the transaction stored.
	_, inv := h.do("POST", "/v1/invoices", e.key, `{"amount":"7000000","description":"Lost broadcast"}`)
	inv1, _ := inv["id"].(string)
	nonce := e.relayerNonce()
	proxy.mode.Store(proxyDrop)
	if code, res := h.do("POST", "/checkout/"+inv1+"/authorization", "", h.authorization(payer, inv1)); code != 202 {
		t.Fatalf("authorization: %d %v", code, res)
	}
	if proxy.hits.Load() == 0 || signed() != 1 || paid(inv1) {
		t.Fatalf("the broadcast was not lost (%d lost, %d signed)", proxy.hits.Load(), signed())
	}
	e.stopServe()
	if e.relayerNonce() != nonce || e.usdcOf(merchant) != 0 {
		t.Fatal("the lost broadcast reached the chain")
	}
	proxy.mode.Store(proxyPass)
	e.startServe(proxy.url)
	waitUntil(t, "the stored transaction to be broadcast and paid", 60*time.Second, func() bool { return paid(inv1) })
	if e.relayerNonce() != nonce+1 || e.usdcOf(merchant) != 7_000_000 || signed() != 1 || h.events("invoice.paid") != 1 {
		t.Fatalf("after the restart: relayer nonce %d (from %d), merchant %d, %d transactions signed, %d invoice.paid",
			e.relayerNonce(), nonce, e.usdcOf(merchant), signed(), h.events("invoice.paid"))
	}

	// The node has the transaction, the relayer was told the broadcast
	// failed; serve stops.
	_, inv = h.do("POST", "/v1/invoices", e.key, `{"amount":"8000000","description":"Lost answer"}`)
	inv2, _ := inv["id"].(string)
	proxy.mode.Store(proxyLose)
	hits := proxy.hits.Load()
	if code, res := h.do("POST", "/checkout/"+inv2+"/authorization", "", h.authorization(payer, inv2)); code != 202 {
		t.Fatalf("authorization: %d %v", code, res)
	}
	// Serve's log names the relayer nonce the payment went out with.
	var submitted string
	for _, line := range strings.Split(e.srv.stderr.String(), "\n") {
		if strings.Contains(line, `msg="settlement submitted"`) && strings.Contains(line, inv2) {
			submitted = line
		}
	}
	if !regexp.MustCompile(fmt.Sprintf(`\snonce=%d(\s|$)`, nonce+1)).MatchString(submitted) {
		t.Errorf("the submission's log line does not name relayer nonce %d: %q", nonce+1, submitted)
	}
	e.stopServe()
	if proxy.hits.Load() == hits || e.usdcOf(merchant) != 15_000_000 {
		t.Fatalf("the transaction did not reach the chain with its answer lost (merchant has %d)", e.usdcOf(merchant))
	}
	proxy.mode.Store(proxyPass)
	e.startServe(proxy.url)
	waitUntil(t, "the mined transaction to be recognised", 60*time.Second, func() bool { return paid(inv2) })
	if e.relayerNonce() != nonce+2 || e.usdcOf(merchant) != 15_000_000 || signed() != 2 || h.events("invoice.paid") != 2 {
		t.Fatalf("after the second restart: relayer nonce %d (from %d), merchant %d, %d transactions signed, %d invoice.paid",
			e.relayerNonce(), nonce, e.usdcOf(merchant), signed(), h.events("invoice.paid"))
	}
	if e.ethOf(keyAddr(payer)).Sign() != 0 {
		t.Fatal("the payer spent ETH")
	}
}

package cmd

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"go.yaml.in/yaml/v3"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// guideLines are the lines of the live-mode guide's sh blocks.
func guideLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("help", "live-mode.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "":
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// guideLine is the guide's one line starting with prefix.
func guideLine(t *testing.T, lines []string, prefix string) string {
	t.Helper()
	var found []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the guide has %d lines starting %q: %q", len(found), prefix, found)
	}
	return found[0]
}

// shellWords splits a guide line as sh would: words, with single- and
// double-quoted parts.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quote, inWord := rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// guideArgs is a guide's tollgate line as arguments, its placeholders
// replaced.
func guideArgs(t *testing.T, lines []string, prefix string, replace ...string) []string {
	t.Helper()
	l := strings.NewReplacer(replace...).Replace(guideLine(t, lines, prefix))
	return shellWords(l)[1:]
}

// TestLiveModeGuideCommandsExist: every tollgate command in the live-mode
// guide names commands and flags the CLI has.
func TestLiveModeGuideCommandsExist(t *testing.T) {
	t.Parallel()
	n := 0
	for _, l := range guideLines(t) {
		if !strings.HasPrefix(l, "tollgate ") {
			continue
		}
		n++
		root := NewRootCmd(NewFactory(&IO{}))
		c, rest, err := root.Find(shellWords(l)[1:])
		if err != nil || c == root {
			t.Errorf("%s: no such command (%v)", l, err)
			continue
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if n < 10 {
		t.Fatalf("the guide has %d tollgate commands", n)
	}
}

// TestLiveModeGuide follows the live-mode guide from its second step on,
// with its own commands: Anvil as the guide starts it, dev-setup and the
// live key saved to the config file, serve reading everything from it, a
// live invoice paid and a subscription activated (as the checkout page's
// script does with the guide's customer account), a renewal after the
// guide's evm_increaseTime, a refund signed with the merchant wallet's key
// file, and the customer's gasless revocation. The first start is played
// by admin commands over a test database.
func TestLiveModeGuide(t *testing.T) {
	t.Parallel()
	lines := guideLines(t)
	dir := t.TempDir()
	data, cfg := filepath.Join(dir, "data"), filepath.Join(dir, "config.yaml")
	listen := freePort(t)
	if err := updateConfigFile(cfg, map[string]any{"database_url": testdb.New(t), "data_dir": data, "api_url": "http://" + listen}); err != nil {
		t.Fatal(err)
	}
	tg := func(args ...string) (int, string, string) { return run(append([]string{"--config", cfg}, args...)...) }
	// What the first start does: a merchant "default" and a test key saved
	// as api_key.
	code, out, _ := tg("admin", "merchant", "create", "--name", "default", "--json")
	var m struct{ ID string }
	_ = json.Unmarshal([]byte(out), &m)
	code2, out2, _ := tg("admin", "key", "create", "--merchant", m.ID, "--mode", "test", "--json")
	var k struct{ Key string }
	_ = json.Unmarshal([]byte(out2), &k)
	if code != 0 || code2 != 0 || updateConfigFile(cfg, map[string]any{"api_key": k.Key}) != nil {
		t.Fatalf("the first start's merchant and key: %s %s", out, out2)
	}

	// 2. Anvil, pinned by the lockfile, as the guide starts it.
	anvilArgs := shellWords(guideLine(t, lines, "cmd/testdata/anvil/node_modules/"))
	if want := filepath.Join("cmd", "testdata", "anvil", "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil"); anvilArgs[0] != want {
		t.Fatalf("the guide runs %s, the tests %s", anvilArgs[0], want)
	}
	node := startAnvilWith(t, anvilArgs[1:]...)

	// 4. The chain in one command, saved for serve.
	code, out, errOut := tg(append(guideArgs(t, lines, "tollgate admin chain dev-setup"), "--chain-rpc-url", node.url)...)
	if code != 0 || !strings.Contains(out, "Saved to "+cfg) {
		t.Fatalf("dev-setup: %d %s %s", code, out, errOut)
	}
	// 5. A live key, saved next to the test key.
	if code, out, _ := tg(guideArgs(t, lines, "tollgate admin merchant list")...); code != 0 || !strings.Contains(out, m.ID) {
		t.Fatalf("merchant list: %d %s", code, out)
	}
	code, out, errOut = tg(guideArgs(t, lines, "tollgate admin key create", "mer_…", m.ID)...)
	if code != 0 || !strings.Contains(out, "Saved as live_api_key") {
		t.Fatalf("key create: %d %s %s", code, out, errOut)
	}
	var saved struct {
		Live string `yaml:"live_api_key"`
	}
	b, _ := os.ReadFile(cfg)
	if err := yaml.Unmarshal(b, &saved); err != nil || !strings.HasPrefix(saved.Live, "sk_live_") {
		t.Fatalf("config after key create: %v\n%s", err, b)
	}

	// 6. serve takes everything from the config file.
	srv := startServe(t, "--config", cfg, "--listen", listen, "--rate-limits=false")
	t.Cleanup(func() { srv.stop(t) })
	waitUntil(t, "serve", 60*time.Second, func() bool {
		select {
		case code := <-srv.done:
			t.Fatalf("serve exited %d: %s", code, srv.stderr.String())
		default:
		}
		return readyz(listen) == 200
	})
	code, out, errOut = tg(append(guideArgs(t, lines, "tollgate admin chain status"), "--json")...)
	var st struct {
		ChainID       uint64 `json:"chain_id"`
		Confirmations uint64 `json:"confirmations"`
		PlanManager   string `json:"plan_manager"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ChainID != 31337 || st.Confirmations != 1 || !common.IsHexAddress(st.PlanManager) {
		t.Fatalf("chain status from the config: %d %s %s", code, out, errOut)
	}

	h := liveHTTP{t: t, base: "http://" + listen, sk: saved.Live}
	customer := hexKey(t, "2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6")
	if !strings.Contains(guideText(t), "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6") ||
		!strings.Contains(guideLine(t, lines, "tollgate admin chain dev-setup"), crypto.PubkeyToAddress(customer.PublicKey).Hex()) {
		t.Fatal("the guide's customer is not the account whose key it prints")
	}

	// 8. A paid live invoice; without --live the same command makes a
	// test invoice with the test key.
	code, out, errOut = tg(append(guideArgs(t, lines, "tollgate --live invoice create"), "--json")...)
	var inv struct {
		ID          string `json:"id"`
		CheckoutURL string `json:"checkout_url"`
		Livemode    bool   `json:"livemode"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &inv) != nil || !inv.Livemode || !strings.HasPrefix(inv.CheckoutURL, h.base+"/checkout/") {
		t.Fatalf("live invoice: %d %s %s", code, out, errOut)
	}
	if code, out, _ := tg("invoice", "create", "--amount", "1usdc", "--description", "test", "--json"); code != 0 || !strings.Contains(strings.ReplaceAll(out, " ", ""), `"livemode":false`) {
		t.Fatalf("without --live: %d %s", code, out)
	}
	if code, res := h.do("POST", "/checkout/"+inv.ID+"/authorization", "", h.authorization(customer, inv.ID)); code != 202 {
		t.Fatalf("paying the invoice: %d %v", code, res)
	}
	waitUntil(t, "the invoice paid", 60*time.Second, func() bool {
		_, out, _ := tg(guideArgs(t, lines, "tollgate --live invoice get", "inv_…", inv.ID)...)
		return strings.Contains(out, "paid")
	})

	// 9. An active live subscription.
	code, out, errOut = tg(append(guideArgs(t, lines, "tollgate --live plan create"), "--json")...)
	var plan struct {
		ID string `json:"id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &plan) != nil || plan.ID == "" {
		t.Fatalf("plan: %d %s %s", code, out, errOut)
	}
	e := &anvilLive{t: t, h: h, key: saved.Live}
	e.subscribe(plan.ID, customer, "u_guide")
	waitUntil(t, "subscription.active", 60*time.Second, func() bool { return h.events("subscription.active") == 1 })
	if code, out, _ := tg(guideArgs(t, lines, "tollgate --live subscriptions list")...); code != 0 || !strings.Contains(out, "active") {
		t.Fatalf("subscriptions list: %d %s", code, out)
	}
	sub := e.subscriptionOf(customer)["id"].(string)

	// 10. A week on the chain's clock, with the guide's request.
	payload := ""
	curl := shellWords(guideLine(t, lines, "curl "))
	for i, w := range curl {
		if w == "--data" && i+1 < len(curl) {
			payload = curl[i+1]
		}
	}
	if !strings.Contains(payload, `"evm_increaseTime","params":[604800]`) {
		t.Fatalf("the guide's request: %q", payload)
	}
	resp, err := http.Post(node.url, "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitUntil(t, "subscription.renewed", 90*time.Second, func() bool { return h.events("subscription.renewed") == 1 })

	// 11. A refund from the merchant's wallet, with its key file.
	_, paid := h.do("GET", "/v1/invoices/"+inv.ID, saved.Live, "")
	code, out, errOut = tg(guideArgs(t, lines, "tollgate admin refund", "pay_…", paid["payment_id"].(string), "~/.local/share/tollgate", data)...)
	if code != 0 {
		t.Fatalf("refund: %d %s %s", code, out, errOut)
	}
	waitUntil(t, "refund.succeeded", 60*time.Second, func() bool { return h.events("refund.succeeded") == 1 })

	// 12. The customer stops paying, without gas.
	code, terms := e.checkoutJSON("/checkout/" + sub + "/revoke")
	if code != 200 {
		t.Fatalf("revocation terms: %d %v", code, terms)
	}
	revoke, sig := signServed(t, customer, terms["typed_data"])
	body, _ := json.Marshal(map[string]any{"deadline": revoke["deadline"], "signature": sig})
	if code, res := h.do("POST", "/checkout/"+sub+"/revoke", "", string(body)); code != 202 {
		t.Fatalf("revocation: %d %v", code, res)
	}
	waitUntil(t, "subscription.revoked", 60*time.Second, func() bool { return h.events("subscription.revoked") == 1 })
}

func guideText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("help", "live-mode.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

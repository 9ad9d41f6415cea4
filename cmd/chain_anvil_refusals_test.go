package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// serveFails runs serve until it exits, which it must do with one line.
func serveFails(t *testing.T, want string, args ...string) {
	t.Helper()
	s := startServe(t, args...)
	select {
	case code := <-s.done:
		msg := strings.TrimSpace(s.stderr.String())
		last := msg[strings.LastIndex(msg, "\n")+1:]
		if code == 0 || !strings.Contains(last, want) || !strings.HasPrefix(last, "tollgate: ") {
			t.Fatalf("serve exited %d; its last line %q, want one line with %q\n%s", code, last, want, msg)
		}
	case <-time.After(60 * time.Second):
		s.stop(t)
		t.Fatalf("serve started; want it refused with %q", want)
	}
}

// TestAnvilLiveRefusals: what must never start does not, with one line
// saying why: --clock chain and dev-setup on a chain that is not a dev
// chain, and serve with a plan manager address that is not a PlanManager
// (the customer would otherwise meet a 500 at checkout).
func TestAnvilLiveRefusals(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	dir := t.TempDir()
	relayer := writeKey(t, dir, anvilRelayerKey)

	other := startAnvilWith(t, "--chain-id", "5")
	serveFails(t, "--clock chain is for dev chains only (chain id 31337 or 1337); chain 5 is not one",
		"--config", filepath.Join(dir, "none.yaml"), "--database-url", db, "--listen", "127.0.0.1:0", "--chain-rpc-url", other.url,
		"--usdc-address", "0x4b20993bc481177ec7e8f571cecae8a9e22c02db", "--relayer-key-file", relayer, "--clock", "chain")
	if code, _, errOut := run("admin", "chain", "dev-setup", "--chain-rpc-url", other.url, "--database-url", db); code != ExitUsage ||
		!strings.Contains(errOut, "runs on dev chains only (chain id 31337 or 1337)") {
		t.Fatalf("dev-setup on chain 5: %d %s", code, errOut)
	}

	node := startAnvil(t)
	if code, _, errOut := run("admin", "merchant", "create", "--name", "refusals", "--database-url", db); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := run("admin", "chain", "dev-setup", "--chain-rpc-url", node.url, "--database-url", db, "--dir", dir, "--json")
	var s struct {
		USDC           string `json:"usdc_address"`
		PlanManager    string `json:"plan_manager_address"`
		RelayerKeyFile string `json:"relayer_key_file"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.USDC == "" {
		t.Fatalf("dev-setup: %d %s %s", code, out, errOut)
	}
	serveWith := func(relayerKeyFile string, more ...string) []string {
		return append([]string{"--config", filepath.Join(dir, "none.yaml"), "--database-url", db, "--listen", "127.0.0.1:0",
			"--chain-rpc-url", node.url, "--relayer-key-file", relayerKeyFile}, more...)
	}
	serveFails(t, "--plan-manager-address "+s.USDC+" is not a PlanManager this relayer can use on chain 31337",
		serveWith(s.RelayerKeyFile, "--usdc-address", s.USDC, "--plan-manager-address", s.USDC)...)
	serveFails(t, "--usdc-address "+s.PlanManager+" is not a USDC (FiatTokenV2) contract on chain 31337",
		serveWith(s.RelayerKeyFile, "--usdc-address", s.PlanManager)...)
	serveFails(t, "its operator is",
		serveWith(writeKey(t, dir, anvilDeployerKey), "--usdc-address", s.USDC, "--plan-manager-address", s.PlanManager)...)
}

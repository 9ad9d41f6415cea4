package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// The chain settings are all or nothing, and each is checked before the
// daemon starts.
func TestChainConfigValidation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "relayer.key")
	if err := os.WriteFile(keyFile, []byte("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.key")
	_ = os.WriteFile(bad, []byte("not a key"), 0o600)
	const usdc = "0x4b20993bc481177ec7e8f571cecae8a9e22c02db"
	for _, c := range []struct {
		chain daemon.ChainConfig
		want  string
	}{
		{daemon.ChainConfig{}, ""},
		{daemon.ChainConfig{USDCAddress: usdc}, "--usdc-address needs --chain-rpc-url"},
		{daemon.ChainConfig{Confirmations: 3}, "--confirmations needs --chain-rpc-url"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", RelayerKeyFile: keyFile}, "needs --usdc-address"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: "0x12", RelayerKeyFile: keyFile}, "--usdc-address must be a 0x-prefixed"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc}, "needs --relayer-key-file"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: bad}, "not a hex secp256k1 private key"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, PlanManager: "nope"}, "--plan-manager-address"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, Confirmations: 5000}, "at most 1000"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, Confirmations: 3}, ""},
	} {
		cfg := daemon.Defaults()
		cfg.Chain = c.chain
		err := cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.chain, err, c.want)
		}
		if c.want == "" && c.chain.RPCURL != "" && cfg.Chain.RelayerKey == nil {
			t.Error("the relayer key was not read")
		}
	}
}

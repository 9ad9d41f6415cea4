package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
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
		{daemon.ChainConfig{Clock: daemon.ClockChain}, "--clock chain needs --chain-rpc-url"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, Clock: "sundial"}, "--clock must be wall or chain"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, PermitPeriods: 5000}, "--permit-periods must be at most 1000"},
		{daemon.ChainConfig{RPCURL: "http://127.0.0.1:8545", USDCAddress: usdc, RelayerKeyFile: keyFile, Clock: daemon.ClockChain}, ""},
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

// TestChainContractsCheckedAtStart: every configured contract is checked
// before the daemon serves (code there, the EIP-712 domain tollgate signs
// in, a plan manager this relayer operates), and a wrong one is one line
// naming the setting, not a 500 at checkout later. --clock chain on a dev
// chain tells the newest block's time.
func TestChainContractsCheckedAtStart(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	otherOperator := e.deploy(contracts.PlanManagerMetaData.Bin, contracts.NewPlanManager().PackConstructor(addr(e.deployer)))
	nowhere := common.HexToAddress("0x00000000000000000000000000000000000badbad")
	usdc, pm := e.token.Address.Hex(), e.pm.Address.Hex()
	for _, c := range []struct {
		usdc, pm string
		want     []string
	}{
		{pm, "", []string{"--usdc-address " + pm + " is not a USDC", "on chain 1337"}},
		{nowhere.Hex(), "", []string{"--usdc-address", "no contract there"}},
		{usdc, usdc, []string{"--plan-manager-address " + usdc + " is not a PlanManager", "eip712Domain()"}},
		{usdc, nowhere.Hex(), []string{"--plan-manager-address", "no contract there"}},
		{usdc, otherOperator.Hex(), []string{"its operator is " + addr(e.deployer).Hex() + ", not the relayer " + addr(e.relayKey).Hex()}},
	} {
		cfg := daemon.ChainConfig{Backend: e.c, RelayerKey: e.relayKey, USDCAddress: c.usdc, PlanManager: c.pm}
		_, _, err := daemon.NewLiveRail(cfg, e.db, nil, nil)
		if err == nil {
			t.Fatalf("usdc %s, plan manager %s: accepted", c.usdc, c.pm)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
				t.Errorf("usdc %s, plan manager %s: %q, want one line with %q", c.usdc, c.pm, err, w)
			}
		}
	}
	r, _, err := daemon.NewLiveRail(daemon.ChainConfig{Backend: e.c, RelayerKey: e.relayKey, USDCAddress: usdc, PlanManager: pm,
		Clock: daemon.ClockChain}, e.db, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Clock().Now(), time.Unix(int64(e.head().Time), 0); !got.Equal(want) {
		t.Fatalf("the chain's clock says %v, the head %v", got, want)
	}
}

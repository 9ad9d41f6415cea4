package cmd

import (
	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
)

// chainFlags adds the on-chain settlement flags `serve` takes, and the
// admin commands that talk to the chain (TOLLGATE_CHAIN_RPC_URL and the
// rest are shared, so one environment configures both).
func chainFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("chain-rpc-url", "", "JSON-RPC URL of the EVM node live mode settles on (enables on-chain settlement)")
	fl.String("usdc-address", "", "the USDC contract on that chain (0x…)")
	fl.String("plan-manager-address", "", "the PlanManager contract on that chain (tollgate admin chain deploy-plan-manager, or dev-setup on a dev chain)")
	fl.String("relayer-key-file", "", "file holding the hex private key of the relayer, which pays live transactions' gas")
	fl.Uint64("confirmations", 0, "confirmations a live payment needs before it counts (default: the chain's; 1 on dev chains)")
}

// serveChainFlags adds what only serve takes of live mode: where the
// daemon's time comes from, and how far a subscriber's permit reaches.
func serveChainFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("clock", daemon.ClockWall, "where the daemon takes the time from: wall, or chain (the newest block's time; dev chains 31337 and 1337 only)")
	fl.Uint64("permit-periods", 0, "how many periods' caps a subscriber's spending permit covers (default 12)")
}

// chainConfig reads the chain settings, unvalidated (daemon.Config
// validates). Every command reads them the same way, flags over
// TOLLGATE_* over the config file, so the admin commands that talk to the
// chain need nothing repeated that serve's configuration has.
func (f *Factory) chainConfig() daemon.ChainConfig {
	return daemon.ChainConfig{
		RPCURL: f.v.GetString("chain_rpc_url"), USDCAddress: f.v.GetString("usdc_address"),
		PlanManager: f.v.GetString("plan_manager_address"), RelayerKeyFile: f.v.GetString("relayer_key_file"),
		Confirmations: f.v.GetUint64("confirmations"), Clock: f.v.GetString("clock"), PermitPeriods: f.v.GetUint64("permit_periods"),
	}
}

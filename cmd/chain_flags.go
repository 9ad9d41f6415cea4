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
	fl.String("plan-manager-address", "", "the PlanManager contract on that chain (tollgate admin chain deploy-plan-manager)")
	fl.String("relayer-key-file", "", "file holding the hex private key of the relayer, which pays live transactions' gas")
	fl.Uint64("confirmations", 0, "confirmations a live payment needs before it counts (default: the chain's; 1 on dev chains)")
}

// chainConfig reads the chain flags, unvalidated (daemon.Config validates).
func (f *Factory) chainConfig() daemon.ChainConfig {
	return daemon.ChainConfig{
		RPCURL: f.v.GetString("chain_rpc_url"), USDCAddress: f.v.GetString("usdc_address"),
		PlanManager: f.v.GetString("plan_manager_address"), RelayerKeyFile: f.v.GetString("relayer_key_file"),
		Confirmations: f.v.GetUint64("confirmations"),
	}
}

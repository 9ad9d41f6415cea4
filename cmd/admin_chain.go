package cmd

import (
	"fmt"
	"log/slog"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
)

// newAdminChainCmd is `admin chain`: the operator's view of live mode's
// chain.
func newAdminChainCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chain",
		Short: "Live mode's chain: set up a dev chain, deploy the plan contract, show the relayer's state",
	}
	cmd.AddCommand(newAdminChainDeploy(f), withDBFlags(newAdminChainStatus(f)), withDBFlags(newAdminChainDevSetup(f)))
	return cmd
}

func newAdminChainStatus(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the chain id, head block, relayer balance, pending transactions, confirmations and contracts",
		Long: `Show live mode's chain as serve sees it: the settings are read as serve
reads them (flags, TOLLGATE_* or the config file), so the confirmations and
the plan manager shown are the ones serve uses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				r, client, err := daemon.NewLiveRail(f.chainConfig(), d.DB, nil, f.newLogger(slog.LevelWarn))
				if err != nil {
					return usageError("%v", err)
				}
				if client != nil {
					defer client.Close()
				}
				st, err := r.Status(cmd.Context())
				if err != nil {
					return err
				}
				out := map[string]any{"object": "chain_status", "chain_id": st.ChainID, "network": st.Network, "head": st.Head,
					"relayer": st.Relayer.Hex(), "relayer_balance_wei": st.BalanceWei.String(), "relayer_balance_low": st.LowBalance,
					"pending_transactions": st.Pending, "usdc": st.Token.Hex(), "plan_manager": nil, "confirmations": r.Confirmations()}
				if st.PlanManager != nil {
					out["plan_manager"] = st.PlanManager.Hex()
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, out)
				}
				tw := newTable(f.IO.Out)
				fmt.Fprintf(tw, "Chain:\t%s (id %d)\nHead:\t%d\nRelayer:\t%s\nBalance:\t%s ETH", st.Network, st.ChainID, st.Head, st.Relayer.Hex(), ether(st.BalanceWei))
				if st.LowBalance {
					fmt.Fprint(tw, "  LOW: fund it or live payments stop")
				}
				fmt.Fprintf(tw, "\nPending transactions:\t%d\nConfirmations:\t%d\nUSDC:\t%s\n", st.Pending, r.Confirmations(), st.Token.Hex())
				if st.PlanManager != nil {
					fmt.Fprintf(tw, "Plan manager:\t%s\n", st.PlanManager.Hex())
				} else {
					fmt.Fprintln(tw, "Plan manager:\tnone configured (no plan_manager_address in the config file, TOLLGATE_PLAN_MANAGER_ADDRESS or --plan-manager-address): subscriptions cannot be paid live")
				}
				return tw.Flush()
			})
		},
	}
	chainFlags(cmd)
	return cmd
}

func newAdminChainDeploy(f *Factory) *cobra.Command {
	var operator, deployerKey string
	cmd := &cobra.Command{
		Use:   "deploy-plan-manager",
		Short: "Deploy the PlanManager contract (subscriptions' capped pull payments) with the relayer as operator",
		Long: `Deploy PlanManager on the chain of --chain-rpc-url. Its operator (the only
account that may activate and charge plans) is the relayer's address unless
--operator says otherwise. The deployer pays the gas: the relayer's key by
default, or --deployer-key-file. Pass the address it prints to serve as
--plan-manager-address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := f.chainConfig()
			if c.RPCURL == "" {
				return usageError("--chain-rpc-url is required")
			}
			keyFile := deployerKey
			if keyFile == "" {
				keyFile = c.RelayerKeyFile
			}
			if keyFile == "" {
				return usageError("--relayer-key-file or --deployer-key-file is required (the deployer pays the gas)")
			}
			key, err := chainrail.LoadKey(keyFile)
			if err != nil {
				return usageError("%v", err)
			}
			op := crypto.PubkeyToAddress(key.PublicKey)
			if c.RelayerKeyFile != "" {
				rk, err := chainrail.LoadKey(c.RelayerKeyFile)
				if err != nil {
					return usageError("--relayer-key-file: %v", err)
				}
				op = crypto.PubkeyToAddress(rk.PublicKey)
			}
			if operator != "" {
				if op, err = chain.ParseAddress(operator); err != nil {
					return usageError("--operator %s", err.(*apperr.Error).Message)
				}
			}
			client, err := chainrail.Dial(cmd.Context(), c.RPCURL)
			if err != nil {
				return err
			}
			defer client.Close()
			fmt.Fprintf(f.IO.Err, "Deploying PlanManager with operator %s; waiting for it to be mined…\n", op.Hex())
			addr, tx, err := chainrail.DeployPlanManager(cmd.Context(), client, key, op)
			if err != nil {
				return err
			}
			if f.JSON() {
				return writeJSONTo(f.IO.Out, map[string]string{"object": "plan_manager", "address": addr.Hex(), "operator": op.Hex(),
					"tx_hash": strings.ToLower(tx.Hex())})
			}
			fmt.Fprintf(f.IO.Out, "PlanManager deployed at %s (transaction %s)\nServe with --plan-manager-address %s\n", addr.Hex(), tx.Hex(), addr.Hex())
			return nil
		},
	}
	chainFlags(cmd)
	cmd.Flags().StringVar(&operator, "operator", "", "the contract's operator (default: the relayer's address)")
	cmd.Flags().StringVar(&deployerKey, "deployer-key-file", "", "key that pays the deployment's gas (default: --relayer-key-file)")
	return cmd
}

// ether formats wei as ETH with up to 6 decimals.
func ether(wei *big.Int) string {
	if wei == nil {
		return "?"
	}
	f := new(big.Float).Quo(new(big.Float).SetInt(wei), big.NewFloat(1e18))
	return f.Text('f', 6)
}

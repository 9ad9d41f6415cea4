package cmd

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// devDeployerKey is the first account of the dev nodes' well-known test
// mnemonic (Anvil, Hardhat): funded on every fresh dev chain, and public,
// so it is only ever used where chain ids say it is a dev chain.
const devDeployerKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

// devRelayerFunding is the ETH the relayer gets when it has less than
// devRelayerLow: gas for thousands of dev transactions.
var (
	devRelayerFunding = new(big.Int).Mul(big.NewInt(10), big.NewInt(1e18))
	devRelayerLow     = big.NewInt(1e18)
)

// devSetupOptions are admin chain dev-setup's flags.
type devSetupOptions struct {
	rpcURL, merchant, deployerKey, dir string
	mints                              []string
	save                               bool
}

// devSetup is what dev-setup did, as --json prints it.
type devSetup struct {
	Object          string      `json:"object"` // "dev_chain"
	ChainID         uint64      `json:"chain_id"`
	RPCURL          string      `json:"chain_rpc_url"`
	USDC            string      `json:"usdc_address"`
	PlanManager     string      `json:"plan_manager_address"`
	Relayer         string      `json:"relayer"`
	RelayerKeyFile  string      `json:"relayer_key_file"`
	Merchant        string      `json:"merchant"`
	MerchantWallet  string      `json:"merchant_wallet"`
	MerchantKeyFile string      `json:"merchant_wallet_key_file"`
	Minted          []devMint   `json:"minted"`
	ServeFlags      []string    `json:"serve_flags"`
	SavedTo         *string     `json:"saved_to"`
	settings        [][2]string // config key, value: what --save writes
}

type devMint struct {
	Address string `json:"address"`
	Amount  string `json:"amount"`
}

func newAdminChainDevSetup(f *Factory) *cobra.Command {
	var o devSetupOptions
	cmd := &cobra.Command{
		Use:   "dev-setup",
		Short: "Set live mode up on a local dev chain in one command (deploy TestUSDC and PlanManager, mint, set the merchant's wallet)",
		Long: `Make a local dev chain (Anvil, Hardhat or geth --dev: chain id 31337 or 1337,
refused anywhere else) ready for live mode:

  - deploys TestUSDC (a USDC with EIP-3009 and EIP-2612, mintable by its
    deployer) and PlanManager, whose operator is the relayer;
  - makes the relayer's key (kept in --dir/relayer.key) and funds it with ETH
    for gas;
  - makes a settlement wallet for the merchant (its key in
    --dir/merchant-wallet.key, for signing refunds) and sets it as the
    merchant's live wallet, with the wallet's own signature;
  - mints test USDC to the accounts named by --mint;
  - prints the serve flags, or with --save writes them to the config file
    (chain_rpc_url, usdc_address, plan_manager_address, relayer_key_file and
    clock: chain), where serve and the admin commands read them.

The deployer pays the gas: the dev chain's first well-known test account
unless --deployer-key-file names another funded key. Run it again to start
over with new contracts; the keys in --dir are reused. The walk-through from
an empty machine to a paid live invoice: tollgate help live-mode.`,
		Example: `  tollgate admin chain dev-setup --mint 0xa0Ee7A142d267C1f36714E4a8F75612F20a79720=1000usdc --save
  tollgate admin chain dev-setup --chain-rpc-url http://127.0.0.1:8545 --merchant mer_… --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.rpcURL = f.v.GetString("chain_rpc_url")
			return f.devSetup(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.String("chain-rpc-url", "http://127.0.0.1:8545", "JSON-RPC URL of the dev chain (Anvil's default address)")
	fl.StringVar(&o.merchant, "merchant", "", "the merchant whose live wallet is set (default: the only merchant)")
	fl.StringArrayVar(&o.mints, "mint", nil, "ADDRESS[=AMOUNT]: mint test USDC to ADDRESS (default 1000usdc); repeatable")
	fl.StringVar(&o.deployerKey, "deployer-key-file", "", "key that deploys and pays (default: the dev chain's first test account)")
	fl.StringVar(&o.dir, "dir", "", "where the relayer's and the merchant wallet's keys are kept (default DATA_DIR/dev-chain-CHAINID)")
	fl.BoolVar(&o.save, "save", false, "write the serve settings to the config file")
	return cmd
}

func (f *Factory) devSetup(ctx context.Context, o devSetupOptions) error {
	mints, err := parseMints(o.mints)
	if err != nil {
		return err
	}
	client, err := chainrail.Dial(ctx, o.rpcURL)
	if err != nil {
		return err
	}
	defer client.Close()
	id, err := client.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("--chain-rpc-url %s did not answer eth_chainId: %v (is the dev chain running?)", o.rpcURL, err)
	}
	if !chainrail.DevChain(id.Uint64()) {
		return usageError("dev-setup deploys test contracts and mints test USDC, so it runs on dev chains only (chain id 31337 or 1337); %s is chain %s", o.rpcURL, id)
	}
	deployer, err := devDeployer(o.deployerKey)
	if err != nil {
		return err
	}
	dir := o.dir
	if dir == "" {
		base := f.v.GetString("data_dir")
		if base == "" {
			base = DataDir()
		}
		dir = filepath.Join(base, fmt.Sprintf("dev-chain-%s", id))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return f.withDB(ctx, func(d *database) error {
		merchant, err := devMerchant(ctx, d, o.merchant)
		if err != nil {
			return err
		}
		relayerFile, merchantFile := filepath.Join(dir, "relayer.key"), filepath.Join(dir, "merchant-wallet.key")
		relayerKey, err := keyIn(relayerFile)
		if err != nil {
			return err
		}
		walletKey, err := keyIn(merchantFile)
		if err != nil {
			return err
		}
		s := &devSetup{Object: "dev_chain", ChainID: id.Uint64(), RPCURL: o.rpcURL, Relayer: keyAddress(relayerKey).Hex(),
			RelayerKeyFile: relayerFile, Merchant: merchant, MerchantWallet: keyAddress(walletKey).Hex(), MerchantKeyFile: merchantFile,
			Minted: []devMint{}}
		progress := func(format string, args ...any) {
			if !f.JSON() {
				fmt.Fprintf(f.IO.Err, format+"\n", args...)
			}
		}
		if bal, err := client.BalanceAt(ctx, keyAddress(deployer), nil); err != nil || bal.Sign() == 0 {
			return fmt.Errorf("the deployer %s has no ETH on chain %s (%v): pass --deployer-key-file with a funded dev account", keyAddress(deployer).Hex(), id, err)
		}
		progress("Deploying TestUSDC…")
		tok := contracts.NewTestUSDC()
		usdc, err := deploy(ctx, client, deployer, id, contracts.TestUSDCMetaData.Bin, tok.PackConstructor("USD Coin", "USDC", "2"))
		if err != nil {
			return fmt.Errorf("deploy TestUSDC: %w", err)
		}
		s.USDC = usdc.Hex()
		if bal, err := client.BalanceAt(ctx, keyAddress(relayerKey), nil); err != nil {
			return err
		} else if bal.Cmp(devRelayerLow) < 0 {
			progress("Funding the relayer %s with 10 ETH…", s.Relayer)
			if err := sendAndWait(ctx, client, deployer, id, keyAddress(relayerKey), devRelayerFunding, nil); err != nil {
				return fmt.Errorf("fund the relayer: %w", err)
			}
		}
		progress("Deploying PlanManager (operator: the relayer)…")
		pm, _, err := chainrail.DeployPlanManager(ctx, client, deployer, keyAddress(relayerKey))
		if err != nil {
			return err
		}
		s.PlanManager = pm.Hex()
		for _, m := range mints {
			progress("Minting %s USDC to %s…", m.amount.USDC(), m.to.Hex())
			if err := sendAndWait(ctx, client, deployer, id, usdc, nil, tok.PackMint(m.to, big.NewInt(int64(m.amount)))); err != nil {
				return fmt.Errorf("mint to %s: %w", m.to.Hex(), err)
			}
			s.Minted = append(s.Minted, devMint{Address: m.to.Hex(), Amount: m.amount.String()})
		}
		progress("Setting %s as %s's live settlement wallet…", s.MerchantWallet, merchant)
		if err := setDevWallet(ctx, d, client, merchant, walletKey); err != nil {
			return err
		}
		s.settings = [][2]string{{"chain_rpc_url", o.rpcURL}, {"usdc_address", s.USDC}, {"plan_manager_address", s.PlanManager},
			{"relayer_key_file", relayerFile}, {"clock", daemon.ClockChain}}
		for _, kv := range s.settings {
			s.ServeFlags = append(s.ServeFlags, "--"+strings.ReplaceAll(kv[0], "_", "-"), kv[1])
		}
		if o.save {
			path := f.configPath()
			set := map[string]any{}
			for _, kv := range s.settings {
				set[kv[0]] = kv[1]
			}
			if err := updateConfigFile(path, set); err != nil {
				return fmt.Errorf("saving the settings to %s: %w", path, err)
			}
			s.SavedTo = &path
		}
		if f.JSON() {
			return writeJSONTo(f.IO.Out, s)
		}
		return printDevSetup(f, s)
	})
}

func printDevSetup(f *Factory, s *devSetup) error {
	tw := newTable(f.IO.Out)
	fmt.Fprintf(tw, "Dev chain:\t%d at %s\nUSDC (TestUSDC):\t%s\nPlanManager:\t%s\nRelayer:\t%s (key in %s)\n"+
		"Merchant wallet:\t%s, live wallet of %s (key in %s)\n",
		s.ChainID, s.RPCURL, s.USDC, s.PlanManager, s.Relayer, s.RelayerKeyFile, s.MerchantWallet, s.Merchant, s.MerchantKeyFile)
	for _, m := range s.Minted {
		a, _ := money.Parse(m.Amount)
		fmt.Fprintf(tw, "Minted:\t%s USDC to %s\n", a.USDC(), m.Address)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.SavedTo != nil {
		fmt.Fprintf(f.IO.Out, "\nSaved to %s; start the daemon with:\n\n    tollgate serve\n", *s.SavedTo)
		return nil
	}
	fmt.Fprintf(f.IO.Out, "\nStart the daemon with (or run dev-setup again with --save to keep these in the config file):\n\n    tollgate serve %s\n",
		strings.Join(s.ServeFlags, " "))
	return nil
}

type mint struct {
	to     common.Address
	amount money.Amount
}

// parseMints reads --mint ADDRESS[=AMOUNT] values.
func parseMints(vals []string) ([]mint, error) {
	var out []mint
	for _, v := range vals {
		addr, amt, hasAmount := strings.Cut(v, "=")
		a, err := chain.ParseAddress(strings.TrimSpace(addr))
		if err != nil {
			return nil, usageError("--mint %s: the address %s", v, err.(*apperr.Error).Message)
		}
		m := mint{to: a, amount: 1000 * 1_000_000}
		if hasAmount {
			if m.amount, err = money.ParseCLI(amt); err != nil || m.amount <= 0 {
				return nil, usageError("--mint %s: the amount must be positive base units or USDC with a suffix (1000usdc)", v)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func devDeployer(file string) (*ecdsa.PrivateKey, error) {
	if file == "" {
		return crypto.HexToECDSA(devDeployerKey)
	}
	k, err := chainrail.LoadKey(file)
	if err != nil {
		return nil, usageError("--deployer-key-file: %v", err)
	}
	return k, nil
}

// devMerchant is --merchant, checked, or the only merchant there is.
func devMerchant(ctx context.Context, d *database, id string) (string, error) {
	ms, err := auth.ListMerchants(ctx, d.DB)
	if err != nil {
		return "", err
	}
	if id != "" {
		for _, m := range ms {
			if m.ID == id {
				return id, nil
			}
		}
		return "", usageError("--merchant %s: no such merchant (tollgate admin merchant list)", id)
	}
	switch len(ms) {
	case 0:
		return "", usageError("there is no merchant yet: start tollgate serve once (it creates \"default\"), or tollgate admin merchant create")
	case 1:
		return ms[0].ID, nil
	}
	return "", usageError("there are %d merchants: name one with --merchant (tollgate admin merchant list)", len(ms))
}

// keyIn loads the key in path, making one there first when there is none.
func keyIn(path string) (*ecdsa.PrivateKey, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		k, err := crypto.GenerateKey()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(hexutil.Encode(crypto.FromECDSA(k))+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	return chainrail.LoadKey(path)
}

func keyAddress(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// setDevWallet sets the merchant's live wallet as `admin wallet challenge`
// and `admin wallet set` do, signing the challenge with the wallet's key.
func setDevWallet(ctx context.Context, d *database, b chain.Backend, merchant string, key *ecdsa.PrivateKey) error {
	s := tenant.Scope{MerchantID: merchant, Mode: tenant.Live}
	c, err := wallet.NewChallenge(ctx, d.DB, s, keyAddress(key).Hex(), time.Now())
	if err != nil {
		return err
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(c.Message)), key)
	if err != nil {
		return err
	}
	sig[64] += 27
	w, err := wallet.SetWith(ctx, d.DB, chainrail.Verifier{B: b}, s, c.Address, hexutil.Encode(sig), time.Now())
	if err != nil {
		return err
	}
	return auditedAfter(ctx, d, walletSetEntry(s, w))
}

func deploy(ctx context.Context, c *ethclient.Client, key *ecdsa.PrivateKey, id *big.Int, bin string, args []byte) (common.Address, error) {
	opts := bind.NewKeyedTransactor(key, id)
	opts.Context = ctx
	addr, tx, err := bind.DeployContract(opts, common.FromHex(bin), c, args)
	if err != nil {
		return common.Address{}, err
	}
	if _, err := bind.WaitDeployed(ctx, c, tx.Hash()); err != nil {
		return common.Address{}, err
	}
	return addr, nil
}

// sendAndWait sends value and data from key to `to` and waits until the
// transaction is mined successfully.
func sendAndWait(ctx context.Context, c *ethclient.Client, key *ecdsa.PrivateKey, id *big.Int, to common.Address, value *big.Int, data []byte) error {
	from := keyAddress(key)
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		return err
	}
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &to, Value: value, Data: data})
	if err != nil {
		return err
	}
	tip, err := c.SuggestGasTipCap(ctx)
	if err != nil {
		return err
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return err
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: gas + gas/5, To: &to, Value: value, Data: data}), types.LatestSignerForChainID(id), key)
	if err != nil {
		return err
	}
	if err := c.SendTransaction(ctx, tx); err != nil {
		return err
	}
	rcpt, err := bind.WaitMined(ctx, c, tx.Hash())
	if err != nil {
		return err
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
	}
	return nil
}

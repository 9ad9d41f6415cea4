package daemon

import (
	"crypto/ecdsa"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
)

// ChainConfig configures live mode's on-chain settlement (serve
// --chain-rpc-url URL --usdc-address 0x… --plan-manager-address 0x…
// --relayer-key-file F [--confirmations N]). Without an RPC URL (or a
// Backend) live mode has no rail: live checkout says so, the rest runs.
type ChainConfig struct {
	RPCURL         string
	USDCAddress    string
	PlanManager    string
	RelayerKeyFile string
	// Confirmations a transaction needs before a payment counts (0: the
	// chain's default, chain.DefaultConfirmations).
	Confirmations uint64
	// Interval is how often the settlement job steps the relayer and
	// records confirmed settlements (default 2s).
	Interval time.Duration
	// Clock is where the daemon takes the time from: "wall" (the default)
	// or "chain", the newest block's timestamp, allowed on dev chains only
	// (serve --clock chain).
	Clock string
	// PermitPeriods is how many periods' caps a subscriber's permit covers
	// (0: chainrail.DefaultPermitPeriods).
	PermitPeriods uint64
	// Backend and RelayerKey, when set, are used instead of dialing RPCURL
	// and reading RelayerKeyFile: tests run the daemon over an in-process
	// chain. Validate sets RelayerKey from the file.
	Backend    chain.Backend
	RelayerKey *ecdsa.PrivateKey

	token, planManager common.Address
}

// Clock sources (serve --clock).
const (
	ClockWall  = "wall"
	ClockChain = "chain"
)

// Enabled reports whether a chain is configured.
func (c ChainConfig) Enabled() bool { return c.RPCURL != "" || c.Backend != nil }

// validate checks the chain settings: all or nothing, addresses that parse,
// a readable relayer key.
func (c *ChainConfig) validate() error {
	if !c.Enabled() {
		for flag, v := range map[string]string{"--usdc-address": c.USDCAddress, "--plan-manager-address": c.PlanManager,
			"--relayer-key-file": c.RelayerKeyFile} {
			if v != "" {
				return fmt.Errorf("%s needs --chain-rpc-url", flag)
			}
		}
		if c.Confirmations != 0 {
			return fmt.Errorf("--confirmations needs --chain-rpc-url")
		}
		if c.Clock == ClockChain {
			return fmt.Errorf("--clock chain needs --chain-rpc-url (a dev chain: chain id 31337 or 1337)")
		}
		return nil
	}
	switch c.Clock {
	case "":
		c.Clock = ClockWall
	case ClockWall, ClockChain:
	default:
		return fmt.Errorf("--clock must be wall or chain, not %q", c.Clock)
	}
	if c.PermitPeriods > 1000 {
		return fmt.Errorf("--permit-periods must be at most 1000")
	}
	if c.USDCAddress == "" {
		return fmt.Errorf("--chain-rpc-url needs --usdc-address (the USDC contract on that chain)")
	}
	a, err := chain.ParseAddress(c.USDCAddress)
	if err != nil {
		return fmt.Errorf("--usdc-address %s", message(err))
	}
	c.token = a
	if c.PlanManager != "" {
		if c.planManager, err = chain.ParseAddress(c.PlanManager); err != nil {
			return fmt.Errorf("--plan-manager-address %s", message(err))
		}
	}
	if c.RelayerKey == nil {
		if c.RelayerKeyFile == "" {
			return fmt.Errorf("--chain-rpc-url needs --relayer-key-file (the key that pays the gas)")
		}
		if c.RelayerKey, err = chainrail.LoadKey(c.RelayerKeyFile); err != nil {
			return fmt.Errorf("--relayer-key-file: %v", err)
		}
	}
	if c.Confirmations > 1000 {
		return fmt.Errorf("--confirmations must be at most 1000")
	}
	if c.Interval < 0 {
		return fmt.Errorf("chain interval must be positive")
	}
	if c.Interval == 0 {
		c.Interval = 2 * time.Second
	}
	return nil
}

// message is an error's text without its code.
func message(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Message
	}
	return err.Error()
}

package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/relayer"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/jobs"
	"github.com/tollgatehq/tollgate/internal/store"
)

// jobChainSettlement steps the relayer, records confirmed live settlements
// and follows on-chain revocations.
const jobChainSettlement = "chain-settlement"

// startChain builds the on-chain rail of cfg.Chain and sets it as the live
// rail. It returns the client it dialed (nil when the config brought its
// own backend), for Shutdown to close.
func startChain(cfg *Config, db *store.DB, log *slog.Logger) (*ethclient.Client, error) {
	r, client, err := NewLiveRail(cfg.Chain, db, cfg.Clock, log)
	if err != nil {
		return nil, err
	}
	log.Info("on-chain settlement configured", "network", r.Network(), "chain_id", r.ChainID(), "usdc", r.Token().Address.Hex(),
		"plan_manager", cfg.Chain.PlanManager, "relayer", r.Relayer().Address().Hex(), "confirmations", r.Confirmations(),
		"permit_periods", r.PermitPeriods(), "clock", cfg.Chain.Clock)
	if cfg.Chain.Clock == ClockChain {
		// Everything the daemon stamps and schedules follows the chain.
		cfg.Clock = r.Clock()
		log.Warn("the daemon tells time by the chain's newest block (--clock chain): for development only", "now", cfg.Clock.Now())
	}
	cfg.LiveRail = r
	return client, nil
}

// NewLiveRail builds the on-chain rail of a validated chain configuration
// over db (admin commands use it too), and returns the client it dialed
// (nil when c brought its own backend) for the caller to close. Every
// configured contract is checked first: a node that does not answer, a
// USDC address that is not a USDC (no code, not 6 decimals, another
// EIP-712 domain), a plan manager address that is not a PlanManager this
// relayer operates, or --clock chain on a chain that is not a dev chain is
// one clear line, never a failed checkout later. With --clock chain the
// rail's clock is the chain's (clk is ignored).
func NewLiveRail(c ChainConfig, db *store.DB, clk clock.Clock, log *slog.Logger) (*chainrail.Rail, *ethclient.Client, error) {
	if !c.Enabled() {
		return nil, nil, fmt.Errorf("no chain configured: set chain_rpc_url, usdc_address and relayer_key_file in the config file serve reads (or TOLLGATE_CHAIN_RPC_URL, …, or --chain-rpc-url, …)")
	}
	if err := c.validate(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := c.Backend
	var client *ethclient.Client
	if b == nil {
		var err error
		if client, err = chainrail.Dial(ctx, c.RPCURL); err != nil {
			return nil, nil, err
		}
		b = client
	}
	id, err := b.ChainID(ctx)
	if err != nil {
		closeClient(client)
		return nil, nil, fmt.Errorf("--chain-rpc-url: the node did not answer eth_chainId: %v", err)
	}
	fail := func(err error) (*chainrail.Rail, *ethclient.Client, error) {
		closeClient(client)
		return nil, nil, err
	}
	if c.Clock == ClockChain && !chainrail.DevChain(id.Uint64()) {
		return fail(fmt.Errorf("--clock chain is for dev chains only (chain id 31337 or 1337); chain %s is not one", id))
	}
	if _, err := chain.NewToken(b, c.token).Check(ctx); err != nil {
		return fail(fmt.Errorf("--usdc-address %s is not a USDC (FiatTokenV2) contract on chain %s: %v", c.token.Hex(), id, err))
	}
	if c.planManager != (common.Address{}) {
		relayerAddr := crypto.PubkeyToAddress(c.RelayerKey.PublicKey)
		if err := chain.NewPlanManager(b, c.planManager).Check(ctx, relayerAddr); err != nil {
			return fail(fmt.Errorf("--plan-manager-address %s is not a PlanManager this relayer can use on chain %s: %v", c.planManager.Hex(), id, err))
		}
	}
	if c.Clock == ClockChain {
		bc, err := chainrail.NewBlockClock(ctx, b, log)
		if err != nil {
			return fail(err)
		}
		clk = bc
	}
	confs := c.Confirmations
	if confs == 0 {
		confs = chain.DefaultConfirmations(id.Uint64())
	}
	r, err := chainrail.New(ctx, db, b, c.RelayerKey, chainrail.Config{Token: c.token, PlanManager: c.planManager,
		Relayer: relayer.Config{Confirmations: confs}, Log: log, Clock: clk, PermitPeriods: c.PermitPeriods})
	if err != nil {
		return fail(err)
	}
	return r, client, nil
}

func closeClient(c *ethclient.Client) {
	if c != nil {
		c.Close()
	}
}

// chainJob is the live rail's settlement worker as a job of the runner:
// every replica may run it (the relayer and the watcher take their locks,
// and each settlement is recorded by the replica that locks it).
func (s *Server) chainJob() jobs.Job {
	rec := chainRecorder{s: s}
	return jobs.Job{Name: jobChainSettlement, Every: s.cfg.Chain.Interval,
		Run: func(ctx context.Context, _ time.Time) (bool, error) { return s.onchain.Step(ctx, rec) }}
}

// registerChainMetrics exposes the relayer's balance and pending count.
func (s *Server) registerChainMetrics() {
	r := s.onchain.Relayer()
	labels := prometheus.Labels{"relayer": r.Address().Hex(), "network": s.onchain.Network()}
	s.metrics.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_relayer_balance_wei", ConstLabels: labels,
			Help: "The relayer's ETH balance (wei) as last read; it pays every live transaction's gas."},
			func() float64 {
				bal, _ := r.LastBalance()
				if bal == nil {
					return -1
				}
				f, _ := new(big.Float).SetInt(bal).Float64()
				return f
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_relayer_balance_low", ConstLabels: labels,
			Help: "1 when the relayer's balance is below its low mark: fund it or live payments stop."},
			func() float64 {
				if _, low := r.LastBalance(); low {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_relayer_pending_transactions", ConstLabels: labels,
			Help: "The relayer's transactions not final yet (pending or awaiting confirmations)."},
			func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				n, err := r.Pending(ctx)
				if err != nil {
					return -1
				}
				return float64(n)
			}),
	)
}

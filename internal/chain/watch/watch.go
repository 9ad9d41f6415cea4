// Package watch follows the chain for the live rail: USDC Transfer logs to
// merchant wallets, Approval logs for the PlanManager (an allowance dropped
// to zero revokes a subscription as surely as PlanRevoked does), and every
// PlanManager event. It reads bounded eth_getLogs ranges, remembers the
// hashes of the blocks it read, and re-checks them each step: a reorg
// rewinds it and is reported, so consumers re-evaluate from that block.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Config says what to follow. Zero values take the defaults.
type Config struct {
	// Name keeps this watcher's cursor apart from others on the database.
	Name        string
	Token       common.Address
	PlanManager common.Address
	// Payees are the wallets whose incoming Transfers are reported (none:
	// no Transfer is reported).
	Payees []common.Address
	// FromBlock is where a watcher with no cursor starts.
	FromBlock uint64
	// MaxRange bounds one eth_getLogs range (default 1,000 blocks).
	MaxRange uint64
	// Depth is how many recent blocks are re-checked for a reorg (default
	// 128).
	Depth uint64
	Log   *slog.Logger
}

// Kind names an event.
type Kind string

// Kinds of Event.
const (
	Transfer      Kind = "transfer"
	Approval      Kind = "approval"
	PlanActivated Kind = "plan_activated"
	PlanCharged   Kind = "plan_charged"
	PlanRevoked   Kind = "plan_revoked"
)

// Event is one log, decoded. Fields that do not apply to its Kind are zero.
type Event struct {
	Kind Kind
	Log  types.Log
	// Transfer: From → To, Value. Approval: From is the owner, To the
	// spender, Value the new allowance.
	From, To common.Address
	Value    *big.Int
	// AllowanceRevoked is set on an Approval of zero to the PlanManager.
	AllowanceRevoked bool
	// Plan events.
	PlanID common.Hash
	Ref    common.Hash
}

// Batch is what one step read.
type Batch struct {
	// Reorg, when not nil, is the first block whose contents changed since
	// an earlier step: events reported from it on may be gone.
	Reorg *uint64
	// Events of blocks [From, To], in chain order.
	Events   []Event
	From, To uint64
	Head     uint64
}

// Watcher follows one chain. Step is safe to call from several replicas:
// each holds a transaction-scoped advisory lock while it reads and stores.
type Watcher struct {
	db      *store.DB
	b       chain.Backend
	cfg     Config
	chainID int64
	log     *slog.Logger
}

// New returns a watcher; it reads the chain id from the node.
func New(ctx context.Context, db *store.DB, b chain.Backend, cfg Config) (*Watcher, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch: chain id: %w", err)
	}
	if cfg.MaxRange == 0 {
		cfg.MaxRange = 1000
	}
	if cfg.Depth == 0 {
		cfg.Depth = 128
	}
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{db: db, b: b, cfg: cfg, chainID: id.Int64(), log: log.With("watcher", cfg.Name)}, nil
}

type block struct {
	Number int64  `db:"number"`
	Hash   string `db:"hash"`
}

// Step re-checks the stored block hashes, then reads the logs of the next
// range of at most MaxRange blocks up to the head. It returns what it read;
// an empty batch when there is nothing new or another replica is stepping.
// Errors are the node or the database being unreachable.
func (w *Watcher) Step(ctx context.Context) (Batch, error) {
	var out Batch
	err := w.db.InTx(ctx, func(tx *store.Tx) error {
		var mine bool
		if err := tx.GetContext(ctx, &mine, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`,
			fmt.Sprintf("tollgate.watch:%s:%d", w.cfg.Name, w.chainID)); err != nil || !mine {
			return err
		}
		var err error
		out, err = w.step(ctx, tx)
		return err
	})
	return out, err
}

func (w *Watcher) step(ctx context.Context, tx *store.Tx) (Batch, error) {
	var out Batch
	var stored []block
	if err := tx.SelectContext(ctx, &stored, `SELECT number, hash FROM chain_watch_blocks
		WHERE watcher = $1 AND chain_id = $2 ORDER BY number DESC`, w.cfg.Name, w.chainID); err != nil {
		return out, err
	}
	next := w.cfg.FromBlock
	if len(stored) > 0 {
		safe, err := w.recheck(ctx, stored)
		if err != nil {
			return out, err
		}
		if safe < stored[0].Number {
			from := uint64(safe + 1)
			out.Reorg = &from
			w.log.Warn("reorg: rewinding", "from_block", from, "was_at", stored[0].Number)
			if _, err := tx.ExecContext(ctx, `DELETE FROM chain_watch_blocks WHERE watcher = $1 AND chain_id = $2 AND number > $3`,
				w.cfg.Name, w.chainID, safe); err != nil {
				return out, err
			}
		}
		next = uint64(safe + 1)
	}
	head, err := w.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return out, fmt.Errorf("watch: head: %w", err)
	}
	out.Head = head.Number.Uint64()
	if next > out.Head {
		return out, nil
	}
	to := min(out.Head, next+w.cfg.MaxRange-1)
	end, err := w.b.HeaderByNumber(ctx, new(big.Int).SetUint64(to))
	if err != nil {
		return out, fmt.Errorf("watch: header %d: %w", to, err)
	}
	logs, err := w.logs(ctx, next, to)
	if err != nil {
		return out, err
	}
	// The chain may have moved under the queries: read again next step.
	again, err := w.b.HeaderByNumber(ctx, new(big.Int).SetUint64(to))
	if err != nil {
		return out, fmt.Errorf("watch: header %d: %w", to, err)
	}
	if again.Hash() != end.Hash() {
		return out, nil
	}
	seen := map[uint64]common.Hash{to: end.Hash()}
	for _, l := range logs {
		if l.Removed {
			continue
		}
		seen[l.BlockNumber] = l.BlockHash
		if ev, ok := w.decode(l); ok {
			out.Events = append(out.Events, ev)
		}
	}
	for n, h := range seen {
		if _, err := tx.ExecContext(ctx, `INSERT INTO chain_watch_blocks (watcher, chain_id, number, hash)
			VALUES ($1, $2, $3, $4) ON CONFLICT (watcher, chain_id, number) DO UPDATE SET hash = EXCLUDED.hash`,
			w.cfg.Name, w.chainID, int64(n), h.Hex()); err != nil {
			return out, err
		}
	}
	if to >= w.cfg.Depth {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chain_watch_blocks WHERE watcher = $1 AND chain_id = $2 AND number < $3
			AND number < (SELECT max(number) FROM chain_watch_blocks WHERE watcher = $1 AND chain_id = $2)`,
			w.cfg.Name, w.chainID, int64(to-w.cfg.Depth)); err != nil {
			return out, err
		}
	}
	out.From, out.To = next, to
	return out, nil
}

// recheck returns the highest stored block still canonical (its number;
// -1 + the oldest stored when none is, i.e. rewind past all of them).
func (w *Watcher) recheck(ctx context.Context, stored []block) (int64, error) {
	for _, s := range stored {
		h, err := w.b.HeaderByNumber(ctx, big.NewInt(s.Number))
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("watch: header %d: %w", s.Number, err)
		}
		if h.Hash().Hex() == s.Hash {
			return s.Number, nil
		}
	}
	oldest := stored[len(stored)-1].Number
	w.log.Warn("reorg deeper than every stored block; rewinding past them", "oldest", oldest)
	return oldest - 1, nil
}

func (w *Watcher) logs(ctx context.Context, from, to uint64) ([]types.Log, error) {
	var queries []ethereum.FilterQuery
	if len(w.cfg.Payees) > 0 {
		var payees []common.Hash
		for _, p := range w.cfg.Payees {
			payees = append(payees, common.BytesToHash(p.Bytes()))
		}
		queries = append(queries, ethereum.FilterQuery{Addresses: []common.Address{w.cfg.Token},
			Topics: [][]common.Hash{{chain.TopicTransfer}, nil, payees}})
	}
	if w.cfg.PlanManager != (common.Address{}) {
		queries = append(queries,
			ethereum.FilterQuery{Addresses: []common.Address{w.cfg.Token},
				Topics: [][]common.Hash{{chain.TopicApproval}, nil, {common.BytesToHash(w.cfg.PlanManager.Bytes())}}},
			ethereum.FilterQuery{Addresses: []common.Address{w.cfg.PlanManager},
				Topics: [][]common.Hash{{chain.TopicPlanActivated, chain.TopicPlanCharged, chain.TopicPlanRevoked}}})
	}
	var all []types.Log
	for _, q := range queries {
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(from), new(big.Int).SetUint64(to)
		logs, err := w.b.FilterLogs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("watch: eth_getLogs %d-%d: %w", from, to, err)
		}
		all = append(all, logs...)
	}
	sortLogs(all)
	return all, nil
}

// Package relayer sends the live rail's transactions and tracks them to a
// settled outcome. It pays the gas with one key, allocates that key's nonces
// under a PostgreSQL advisory lock (so replicas never collide), stores every
// signed transaction before broadcasting it, rebroadcasts stored bytes after
// a restart rather than signing again, replaces a stuck transaction with a
// higher tip, and confirms a settlement only when its receipt succeeded,
// carries the expected Transfer logs, is on the canonical chain and is deep
// enough. A reorg that removes it puts it back to pending.
package relayer

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/store"
)

// State is where a settlement stands.
type State string

// States. Confirmed, Reverted and Failed are final.
const (
	// Pending: signed and stored (broadcast or about to be), not in a
	// canonical block.
	Pending State = "pending"
	// Mined: in a canonical block, with fewer confirmations than required.
	Mined State = "mined"
	// Confirmed: receipt status 1 with the expected Transfer logs, canonical,
	// with the required confirmations. The payment succeeded.
	Confirmed State = "confirmed"
	// Reverted: the transaction was mined and reverted, deep enough.
	Reverted State = "reverted"
	// Failed: it can never succeed (the authorization was canceled, the
	// nonce was taken by another transaction, the expected logs are missing).
	Failed State = "failed"
)

// Final reports whether s will not change any more.
func (s State) Final() bool { return s == Confirmed || s == Reverted || s == Failed }

// Settlement is what the rail needs to know about a submitted call.
type Settlement struct {
	Key   string
	State State
	// TxHash is the transaction that carried the call out: ours, or another
	// relayer's that used the same authorization. Zero while pending.
	TxHash        common.Hash
	BlockNumber   uint64
	Confirmations uint64
	Nonce         *uint64
	// Failure says why, for Reverted and Failed: a chain.Reason, a colon
	// and details.
	Failure string
}

// Reason returns the chain.Reason that Failure starts with ("" when there
// is no failure).
func (s Settlement) Reason() chain.Reason {
	reason, _, _ := strings.Cut(s.Failure, ":")
	return chain.Reason(reason)
}

// Config tunes a relayer. Zero values take the defaults.
type Config struct {
	// Confirmations a settlement needs (default 1: its own block).
	Confirmations uint64
	// StuckBlocks is how many blocks a broadcast transaction may wait
	// before it is replaced with a higher tip (default 3).
	StuckBlocks uint64
	// LowBalance is the relayer balance (wei) below which it warns
	// (default 0.01 ether).
	LowBalance *big.Int
	// MinTip is the least priority fee (wei) offered (default none: the
	// node's suggestion).
	MinTip *big.Int
	// FirstTip, when set, is the tip of every first attempt instead of the
	// node's suggestion (tests use it to make a transaction stuck).
	FirstTip *big.Int
	// LogRange bounds eth_getLogs ranges when reconciling (default 2,000).
	LogRange uint64
	Log      *slog.Logger
}

// Relayer sends and tracks transactions for one key on one chain.
type Relayer struct {
	db      *store.DB
	b       chain.Backend
	key     *ecdsa.PrivateKey
	from    common.Address
	sender  string
	chainID *big.Int
	cfg     Config
	log     *slog.Logger

	mu      sync.Mutex
	balance *big.Int

	// afterStore runs between storing a signed transaction and
	// broadcasting it; a test sets it to "kill" the relayer there.
	afterStore func() error
}

// New returns a relayer for key on b's chain, storing its transactions in
// db (migrated). It reads the chain id from the node.
func New(ctx context.Context, db *store.DB, b chain.Backend, key *ecdsa.PrivateKey, cfg Config) (*Relayer, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("relayer: chain id: %w", err)
	}
	if cfg.Confirmations == 0 {
		cfg.Confirmations = 1
	}
	if cfg.StuckBlocks == 0 {
		cfg.StuckBlocks = 3
	}
	if cfg.LowBalance == nil {
		cfg.LowBalance = big.NewInt(1e16)
	}
	if cfg.LogRange == 0 {
		cfg.LogRange = 2000
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	return &Relayer{db: db, b: b, key: key, from: from, sender: hex(from), chainID: id, cfg: cfg,
		log: log.With("relayer", from.Hex(), "chain_id", id)}, nil
}

// Address returns the relayer's address (PlanManager's operator).
func (r *Relayer) Address() common.Address { return r.from }

// ChainID returns the chain the relayer sends on.
func (r *Relayer) ChainID() *big.Int { return new(big.Int).Set(r.chainID) }

// Status returns the settlement stored under key, as of the last Submit or
// Step. It fails with resource_not_found when nothing was submitted under
// key.
func (r *Relayer) Status(ctx context.Context, key string) (Settlement, error) {
	in, err := getIntent(ctx, r.db, r.chainID.Int64(), key)
	if err != nil {
		return Settlement{}, err
	}
	if in == nil {
		return Settlement{}, errNotFound(key)
	}
	return in.settlement(), nil
}

// Balance returns the relayer's balance in wei and whether it is below the
// configured low mark, and remembers it for LastBalance. A low balance is
// logged as a warning.
func (r *Relayer) Balance(ctx context.Context) (*big.Int, bool, error) {
	bal, err := r.b.BalanceAt(ctx, r.from, nil)
	if err != nil {
		return nil, false, fmt.Errorf("relayer balance: %w", err)
	}
	low := bal.Cmp(r.cfg.LowBalance) < 0
	if low {
		r.log.Warn("relayer balance is low; fund it or transactions will stop", "balance_wei", bal, "low_mark_wei", r.cfg.LowBalance)
	}
	r.mu.Lock()
	r.balance = bal
	r.mu.Unlock()
	return new(big.Int).Set(bal), low, nil
}

// LastBalance returns the balance seen by the last Balance or Step (nil
// before the first), for the daemon's /metrics, and whether it is low.
func (r *Relayer) LastBalance() (*big.Int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.balance == nil {
		return nil, false
	}
	return new(big.Int).Set(r.balance), r.balance.Cmp(r.cfg.LowBalance) < 0
}

// Pending returns how many of this relayer's settlements are not final.
func (r *Relayer) Pending(ctx context.Context) (int, error) {
	var n int
	err := r.db.GetContext(ctx, &n, `SELECT count(*) FROM chain_intents
		WHERE chain_id = $1 AND sender = $2 AND status IN ('pending', 'mined')`, r.chainID.Int64(), r.sender)
	return n, err
}

func (in *intent) settlement() Settlement {
	s := Settlement{Key: in.Key, State: in.Status, Confirmations: uint64(in.Confirmations), Failure: in.Failure.String}
	if in.TxHash.Valid {
		s.TxHash = common.HexToHash(in.TxHash.String)
	}
	if in.BlockNumber.Valid {
		s.BlockNumber = uint64(in.BlockNumber.Int64)
	}
	if in.Nonce.Valid {
		n := uint64(in.Nonce.Int64)
		s.Nonce = &n
	}
	return s
}

var errKilled = errors.New("relayer killed between storing and broadcasting (test)")

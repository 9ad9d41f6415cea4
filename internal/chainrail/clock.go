package chainrail

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/clock"
)

// DevChain reports whether chainID is a local development chain (Anvil,
// Hardhat and the simulated backend use 31337, geth --dev 1337): the only
// chains whose clock may drive billing, and the only ones `admin chain
// dev-setup` deploys to.
func DevChain(chainID uint64) bool { return chainID == 31337 || chainID == 1337 }

// clockRefresh is how long the newest block's time is reused before the
// node is asked again.
const clockRefresh = time.Second

// BlockClock tells the time by the chain: the newest block's timestamp,
// read at most once a second and never going back. `serve --clock chain`
// runs the daemon on it, so on a dev chain moving the chain's time (anvil's
// evm_increaseTime and a new block) moves renewals, dunning and expiries as
// a test clock does in test mode. Between blocks it stands still.
type BlockClock struct {
	b   chain.Backend
	log *slog.Logger
	// refreshing is held by the one caller reading the head; the others
	// answer the last time meanwhile.
	refreshing sync.Mutex
	unix       atomic.Int64 // the newest block time seen, in seconds
	readAt     atomic.Int64 // when it was read (wall clock, unix nanoseconds)
}

var _ clock.Clock = (*BlockClock)(nil)

// NewBlockClock reads the newest block's time from b; it fails when the
// node does not answer.
func NewBlockClock(ctx context.Context, b chain.Backend, log *slog.Logger) (*BlockClock, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &BlockClock{b: b, log: log.With("component", "chain-clock")}
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *BlockClock) refresh(ctx context.Context) error {
	h, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("the chain's clock: latest block: %w", err)
	}
	for {
		old := c.unix.Load()
		if int64(h.Time) <= old || c.unix.CompareAndSwap(old, int64(h.Time)) {
			break
		}
	}
	c.readAt.Store(time.Now().UnixNano())
	return nil
}

// Now returns the newest block's time. A node that does not answer leaves
// the time where it was (logged), never the wall clock's.
func (c *BlockClock) Now() time.Time {
	if time.Since(time.Unix(0, c.readAt.Load())) >= clockRefresh && c.refreshing.TryLock() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := c.refresh(ctx); err != nil {
			c.log.Warn("chain clock not refreshed", "err", err)
			c.readAt.Store(time.Now().UnixNano())
		}
		cancel()
		c.refreshing.Unlock()
	}
	return time.Unix(c.unix.Load(), 0).UTC()
}

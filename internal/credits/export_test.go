package credits

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/store"
)

// Pause makes calls queue up without a committer; Resume starts one, which
// takes everything queued (up to the batch cap) as one batch.
func (b *Batcher) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused = true
}

func (b *Batcher) Resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused = false
	if len(b.queue) > 0 {
		b.startCommitter()
	}
}

// Queued is the number of calls waiting for a committer.
func (b *Batcher) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// SetFault makes f run in each batch's transaction before each step
// ("lock", "resolve", "read", "write"); an error fails the batch.
func (b *Batcher) SetFault(f func(ctx context.Context, tx *store.Tx, step string) error) { b.fault = f }

// Fallbacks is the number of batches applied one by one so far.
func (b *Batcher) Fallbacks() int64 { return b.fallbacks.Load() }

// SetReadAhead sets how many grant remainders of each account a batch
// reads before it decides whether to read them all.
func (b *Batcher) SetReadAhead(n int) { b.readAhead = n }

package credits

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Batcher applies stand-alone grants and debits by group commit. A grant
// or debit on its own is a transaction of about six round trips and an
// fsync'd commit; one account takes them one after another, since each
// holds the account's lock until it commits. The Batcher queues concurrent
// calls, and a committer takes everything queued (up to maxBatch) and
// applies it in one transaction with a fixed number of statements, however
// many items and accounts it holds (batch_tx.go). Items on one account
// apply one after another on the same in-memory ledger, in arrival order,
// with the same rules and results as Grant and Debit.
//
// A Batcher costs nothing while idle: committers are started when calls
// are queued and end when the queue is empty. A call with nothing else
// queued and no batch taking its locks is taken at once, never held back
// to fill a batch; one that comes while a batch takes its locks is taken
// when they are held, with the others that came meanwhile.
//
// Grant, Debit, GrantTx and DebitTx apply one call as a batch of one: a
// Batcher is one way in, not another way to apply.
type Batcher struct {
	db *store.DB
	// pool runs the batches: db, or a pool of the Batcher's own whose
	// sessions plan generically (GenericPlans).
	pool *store.DB
	// committers bounds the batches in flight, each holding a pool
	// connection: one per CPU, at least two. Two overlap one batch's
	// commit with the next's statements and keep the share of the CPU that
	// the database gives credit writes from shrinking to one backend's on
	// a busy machine; more than the CPUs only split the queue into smaller
	// batches (on 2 cores, BenchmarkCreditDebitsHTTP1000Accounts: 2,040
	// debits/s with 4 committers, in batches of 2.6 calls; 2,450/s with 2).
	committers int
	maxBatch   int
	// readAhead is how many grant remainders of each account a batch reads
	// at first (in drawing order): a debit usually draws on the first, or
	// crosses into the second, while a funded account may hold dozens. An
	// account they may not be enough for is read again whole. (Shared
	// harness: 42 rows a batch read with 8, 13 with 2; the read statement
	// 0.35 -> 0.24 ms.)
	readAhead int
	// fault, for tests, fails a batch's transaction at the named step.
	fault func(ctx context.Context, tx *store.Tx, step string) error
	// timeout bounds a batch, which runs detached from its callers'
	// contexts: one caller hanging up must not roll back the others.
	timeout time.Duration
	// fallbacks counts the batches applied one by one, for tests.
	fallbacks atomic.Int64

	mu      sync.Mutex
	queue   []*item
	running int
	// inFlight holds the idempotency keys of the batches being applied:
	// a second call with one waits for the next batch, so it replays the
	// first instead of racing it for the key.
	inFlight map[string]bool
	// busy maps the customers named in the batches being applied to the
	// committer applying them. Only that committer takes further calls for
	// one: another would only wait for the account's lock, holding a
	// connection and the rest of its batch. So calls on a hot account
	// gather into one large batch while the previous one commits.
	busy map[string]int
	// locking is set while a committer takes its batch's locks (its first
	// statement): only once they are held does another take a batch.
	// Otherwise the calls of a burst (the answers of one batch bring their
	// clients' next calls together) were taken one by one, each a
	// transaction and a WAL flush of its own, by whichever committer was
	// free, while the rest queued for one large batch: under load most
	// batches held a single call. A batch taken when the one before holds
	// its locks holds what came meanwhile, and its statements overlap the
	// rest of that batch's and its commit's flush. (Taken only at the
	// commit, batches grew larger still, but the closed loop then waited
	// on each batch's statements and the rate did not rise.)
	locking bool
	lastID  int
	closed  bool
	// paused, for tests, starts no committer, so that calls queue up and
	// the next one takes them together.
	paused bool
	wg     sync.WaitGroup
}

// NewBatcher returns a Batcher over db. Close it before closing db.
func NewBatcher(db *store.DB) *Batcher {
	return &Batcher{db: db, pool: db, committers: max(2, runtime.GOMAXPROCS(0)), maxBatch: 128, readAhead: defaultReadAhead, timeout: 30 * time.Second, inFlight: map[string]bool{}, busy: map[string]int{}}
}

// GenericPlans runs the batches on a pool of the Batcher's own, of a
// connection per committer and one to prepare statements on, whose
// sessions plan every statement generically (store.DB.GenericPlans): a
// batch's transaction then sets nothing first, one round trip less of its
// six. Call it before the first call; Close closes that pool.
func (b *Batcher) GenericPlans(ctx context.Context) error {
	g, err := b.db.GenericPlans(ctx, b.committers+1)
	if err != nil {
		return err
	}
	b.pool = g
	return nil
}

// item is one queued call: a grant or a debit, validated.
type item struct {
	s     tenant.Scope
	now   time.Time
	grant *GrantInput // exactly one of grant and debit
	debit *DebitInput
	key   string // the idempotency key with its scope, "" without one
	cust  string // the customer reference with its scope
	done  chan outcome
	taken bool // guarded by Batcher.mu
}

type outcome struct {
	grant GrantResult
	debit DebitResult
	err   error
}

// Grant is credits.Grant through the batch: same validation, result,
// event and errors.
func (b *Batcher) Grant(ctx context.Context, s tenant.Scope, in GrantInput, now time.Time) (GrantResult, error) {
	if err := in.Validate(now); err != nil {
		return GrantResult{}, err
	}
	out := b.submit(ctx, grantItem(s, in, now))
	return out.grant, out.err
}

// Debit is credits.Debit through the batch: same validation, result,
// event and errors.
func (b *Batcher) Debit(ctx context.Context, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	if err := in.Validate(); err != nil {
		return DebitResult{}, err
	}
	out := b.submit(ctx, debitItem(s, in, now))
	return out.debit, out.err
}

func scopedKey(s tenant.Scope, key *string) string {
	if key == nil {
		return ""
	}
	return s.MerchantID + "\x00" + string(s.Mode) + "\x00" + *key
}

// custOf names the customer a call refers to, as the batch looks it up
// (by id when given). Two names of one customer are two keys: the
// account's lock still orders their batches.
func custOf(s tenant.Scope, r customers.Ref) string {
	if r.ID != nil {
		return scopedKey(s, r.ID)
	}
	return scopedKey(s, r.ExternalID) + "\x00ext"
}

// Close waits for the queued calls to be applied. Calls made after it are
// applied one by one, each in a transaction of its own.
func (b *Batcher) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wg.Wait()
	if b.pool != b.db {
		b.pool.Close()
	}
}

// submit queues it and waits for its outcome. A caller whose context ends
// before a committer took its item withdraws it; once taken, the item is
// applied whatever the caller does, and the caller returns at once.
func (b *Batcher) submit(ctx context.Context, it *item) outcome {
	it.done = make(chan outcome, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.one(ctx, b.db, it)
	}
	b.queue = append(b.queue, it)
	b.startCommitter()
	b.mu.Unlock()
	select {
	case out := <-it.done:
		return out
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !it.taken {
		b.queue = slices.DeleteFunc(b.queue, func(q *item) bool { return q == it })
	}
	b.mu.Unlock()
	return outcome{err: ctx.Err()}
}

// startCommitter starts a committer for a call just queued unless enough
// are running (those take it when their batch is done). b.mu is held.
func (b *Batcher) startCommitter() {
	if b.running < b.committers && !b.paused && !b.locking {
		b.running++
		b.lastID++
		b.wg.Add(1)
		go b.commit(b.lastID)
	}
}

// commit is a committer: it applies batches until the queue holds nothing
// it may take.
func (b *Batcher) commit(me int) {
	defer b.wg.Done()
	var batch []*item
	for {
		if batch = b.next(me, batch); batch == nil {
			return
		}
		b.apply(batch)
	}
}

// next releases the keys and customers of the batch committer me just
// applied and takes its next one in arrival order, leaving queued an item
// whose idempotency key is in this batch or another's, or whose customer
// is another committer's. With nothing to take the committer ends, in the
// same critical section, so no queued call is left without one: the
// committer an item waits for takes it next.
func (b *Batcher) next(me int, done []*item) []*item {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, it := range done {
		if it.key != "" {
			delete(b.inFlight, it.key)
		}
		delete(b.busy, it.cust)
	}
	if b.locking {
		// The committer locking starts one that takes the next batch's
		// calls once its locks are held (locked).
		b.running--
		return nil
	}
	var batch []*item
	keep := b.queue[:0]
	for _, it := range b.queue {
		owner, busy := b.busy[it.cust]
		// A batch holds one merchant's calls: its statements lock and
		// write rows of that merchant only (they could live on another
		// database node than the next merchant's).
		other := len(batch) > 0 && it.s.MerchantID != batch[0].s.MerchantID
		if len(batch) == b.maxBatch || other || (it.key != "" && b.inFlight[it.key]) || (busy && owner != me) {
			keep = append(keep, it)
			continue
		}
		if it.key != "" {
			b.inFlight[it.key] = true
		}
		b.busy[it.cust] = me
		it.taken = true
		batch = append(batch, it)
	}
	clear(b.queue[len(keep):])
	b.queue = keep
	if len(batch) == 0 {
		b.running--
	} else {
		b.locking = true
	}
	return batch
}

// locked ends the locking of the batch a committer took: its locks are
// held, or the batch failed before. Calls queued meanwhile get a
// committer. It is called once per batch (apply).
func (b *Batcher) locked() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.locking = false
	if len(b.queue) > 0 {
		b.startCommitter()
	}
}

// apply runs a batch and hands each caller its outcome. When the batch
// cannot be applied as one (an SQL error, or a row another transaction
// wrote meanwhile), its items are applied one by one, each a batch of its
// own (applyAlone), so one item's trouble costs the others nothing.
func (b *Batcher) apply(batch []*item) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	cfg := b.config()
	cfg.locked = sync.OnceFunc(b.locked)
	outs, err := b.tryBatch(ctx, cfg, batch)
	cancel() // also rolls back a transaction a panic left open
	cfg.locked()
	if err != nil {
		b.fallbacks.Add(1)
		for _, it := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
			it.done <- b.one(ctx, b.pool, it)
			cancel()
		}
		return
	}
	for i, it := range batch {
		it.done <- outs[i]
	}
}

// tryBatch is applyTx with a panic (a bug) turned into an error: in a
// committer it would take the whole daemon down, not one request.
func (b *Batcher) tryBatch(ctx context.Context, cfg batchConfig, batch []*item) (outs []outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("credits batch: panic: %v", p)
		}
	}()
	return applyTx(ctx, b.pool, cfg, batch)
}

// one applies an item in a transaction of its own on db; a panic is its
// internal error.
func (b *Batcher) one(ctx context.Context, db *store.DB, it *item) (out outcome) {
	defer func() {
		if p := recover(); p != nil {
			out = outcome{err: apperr.New(apperr.Internal, "credits: panic: %v", p)}
		}
	}()
	return applyAlone(ctx, db, b.config(), it)
}

func (b *Batcher) config() batchConfig { return batchConfig{readAhead: b.readAhead, fault: b.fault} }

package store

import (
	"context"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/id"
)

// hub delivers the wake-ups of committed transactions: to this process's
// subscribers directly, and to other replicas by NOTIFY, sent by one
// goroutine on its own short statements so a burst of commits costs a few
// notifications, not one each inside the business transactions.
type hub struct {
	db     *sqlx.DB
	origin string // payload of our NOTIFYs, so our own listener can skip them

	mu      sync.Mutex
	subs    map[string]map[int]func()
	nextSub int
	pending map[string]bool

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newHub(db *sqlx.DB) *hub {
	h := &hub{
		db: db, origin: id.Random(12), subs: map[string]map[int]func(){}, pending: map[string]bool{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go h.run()
	return h
}

// Subscribe calls fn (which must not block) whenever a transaction that
// asked for channel commits, here or in another replica, until the
// returned function is called. Wake-ups may be coalesced or, across
// replicas, lost: subscribers also poll.
func (db *DB) Subscribe(channel string, fn func()) (unsubscribe func()) {
	h := db.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[channel] == nil {
		h.subs[channel] = map[int]func(){}
	}
	n := h.nextSub
	h.nextSub++
	h.subs[channel][n] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[channel], n)
	}
}

// Wake calls channel's subscribers in this process, as a NOTIFY from
// another replica does (the job runner's listener calls it).
func (db *DB) Wake(channel string) { db.hub.local(channel) }

// Notify wakes channel's subscribers here and, by the coalesced NOTIFY, in
// other replicas: for work committed by a single statement outside a Tx
// (a Tx asks for it with Tx.Notify).
func (db *DB) Notify(channel string) { db.hub.fire(channel) }

// Origin identifies this pool's NOTIFYs: a listener skips notifications
// whose payload is its own pool's origin, already delivered locally.
func (db *DB) Origin() string { return db.hub.origin }

func (h *hub) local(channel string) {
	h.mu.Lock()
	fns := make([]func(), 0, len(h.subs[channel]))
	for _, fn := range h.subs[channel] {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// fire wakes channel's local subscribers and queues the NOTIFY for other
// replicas.
func (h *hub) fire(channel string) {
	h.local(channel)
	h.mu.Lock()
	h.pending[channel] = true
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// notifyGap is the least time between two NOTIFY statements: channels
// fired meanwhile wait for the next. Under a stream of commits each batch
// of events otherwise cost a statement and a transaction of its own (1,551
// in a 10 s phase of webhook-subscribed credit grants, one per batch);
// other replicas hear of work at most this much later.
const notifyGap = 10 * time.Millisecond

// run sends the queued NOTIFYs, all pending channels in one statement, at
// most one statement each notifyGap; channels fired while one is in flight
// or during the gap go in the next.
func (h *hub) run() {
	defer close(h.done)
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.kick:
		}
		select {
		case <-h.stop:
			return
		case <-gap.C:
		}
		h.mu.Lock()
		chans := make([]string, 0, len(h.pending))
		for ch := range h.pending {
			chans = append(chans, ch)
		}
		clear(h.pending)
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// A lost NOTIFY only delays other replicas until their next poll,
		// so its commit does not wait for the disk: a NOTIFY gives its
		// transaction an id, and with it a commit record to flush, one
		// more fsync to wait for with every burst of commits.
		_, _ = h.db.ExecContext(ctx, `SELECT pg_notify(ch, $2) FROM set_config('synchronous_commit', 'off', true) AS async,
			unnest($1::text[]) AS ch`, pq.StringArray(chans), h.origin)
		cancel()
		gap.Reset(notifyGap)
	}
}

func (h *hub) close() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
		<-h.done
	}
}

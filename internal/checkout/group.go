package checkout

import (
	"sync"

	"github.com/tollgatehq/tollgate/internal/store"
)

// group is group commit: concurrent callers' writes queue, and a caller
// that finds no batch running (or fewer than maxLeaders) leads one: it
// takes itself and up to maxBatch-1 queued writes and runs them as one
// statement, one transaction, one WAL flush. When its batch is done it
// hands the lead to the first write still queued, so no caller runs more
// than one batch and a write waits for at most the batches before it.
// Alone, a write is its own batch at once: no added latency when idle.
//
// On this machine's disks a commit's flush is milliseconds and PostgreSQL
// groups only the commits already waiting when a flush starts; a checkout
// under load spent most of its time waiting for WALWrite.
type group[I, R any] struct {
	run func(calls []*call[I, R])

	mu      sync.Mutex
	queue   []*call[I, R]
	leaders int
}

// call is one write of a batch: run sets out.
type call[I, R any] struct {
	in  I
	out R
	// lead tells a queued call that its write was done by another's
	// batch (false) or that it leads the next batch (true).
	lead chan bool
}

const (
	// maxLeaders batches run at once: one executing while another
	// waits for its flush keeps both PostgreSQL and the disk busy.
	maxLeaders = 2
	// maxBatch bounds a statement's arrays.
	maxBatch = 64
)

// do runs in in a batch and returns its outcome.
func (g *group[I, R]) do(in I) R {
	c := &call[I, R]{in: in, lead: make(chan bool, 1)}
	g.mu.Lock()
	if g.leaders >= maxLeaders {
		g.queue = append(g.queue, c)
		g.mu.Unlock()
		if !<-c.lead {
			return c.out
		}
		// The lead was handed over with the leader's count.
		g.mu.Lock()
	} else {
		g.leaders++
	}
	n := min(len(g.queue), maxBatch-1)
	batch := append([]*call[I, R]{c}, g.queue[:n]...)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()

	g.run(batch)
	for _, o := range batch[1:] {
		o.lead <- false
	}

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.leaders--
		g.mu.Unlock()
		return c.out
	}
	next := g.queue[0]
	g.queue = g.queue[1:]
	g.mu.Unlock()
	next.lead <- true
	return c.out
}

// Writers is what the checkouts of one pool share: the group commits of
// invoice payments and plan checkouts, and the plan cache. The daemon makes
// one with NewWriters and keeps it in its Env; an Env without one pays on
// the locked path.
type Writers struct {
	pays        *group[payWrite, payResult]
	activations *group[activationWrite, activationResult]
	plans       *planCache
}

// NewWriters returns the Writers of db.
func NewWriters(db *store.DB) *Writers {
	return &Writers{
		pays:        &group[payWrite, payResult]{run: func(calls []*call[payWrite, payResult]) { runPays(db, calls) }},
		activations: &group[activationWrite, activationResult]{run: func(calls []*call[activationWrite, activationResult]) { runActivations(db, calls) }},
		plans:       &planCache{plans: map[string]planTerms{}},
	}
}

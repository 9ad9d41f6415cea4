// Package batch runs concurrent callers' calls together: group commit for
// writes (one statement, one transaction, one WAL flush for many requests)
// and shared lookups (one query for many requests' keys).
//
// A caller that finds fewer than Leaders batches running leads one: it
// takes itself and up to Max-1 queued calls and runs them. When its batch
// is done it hands the lead to the first call still queued, so no caller
// runs more than one batch and a call waits for at most the batches before
// it. Alone, a call is its own batch at once: no added latency when idle.
// Every batch starts after each of its calls arrived, so a batched read
// sees everything committed before its callers asked.
package batch

import "sync"

// Group batches calls of input I and result R.
type Group[I, R any] struct {
	run     func(calls []*Call[I, R])
	leaders int
	max     int

	mu      sync.Mutex
	queue   []*Call[I, R]
	running int
}

// Call is one call of a batch: run reads In and sets Out.
type Call[I, R any] struct {
	In  I
	Out R
	// lead tells a queued call that another's batch ran it (false) or
	// that it leads the next batch (true).
	lead chan bool
}

// Defaults: two batches at once (one executing while the other waits for
// its flush keeps both PostgreSQL and the disk busy), 64 calls a batch
// (bounding a statement's arrays).
const (
	DefaultLeaders = 2
	DefaultMax     = 64
)

// New returns a Group whose batches run is given; leaders and max of 0
// take the defaults.
func New[I, R any](run func(calls []*Call[I, R]), leaders, max int) *Group[I, R] {
	if leaders <= 0 {
		leaders = DefaultLeaders
	}
	if max <= 0 {
		max = DefaultMax
	}
	return &Group[I, R]{run: run, leaders: leaders, max: max}
}

// Do runs in in a batch and returns its outcome.
func (g *Group[I, R]) Do(in I) R {
	c := &Call[I, R]{In: in, lead: make(chan bool, 1)}
	g.mu.Lock()
	if g.running >= g.leaders {
		g.queue = append(g.queue, c)
		g.mu.Unlock()
		if !<-c.lead {
			return c.Out
		}
		// The lead was handed over with the leader's count.
		g.mu.Lock()
	} else {
		g.running++
	}
	n := min(len(g.queue), g.max-1)
	calls := append([]*Call[I, R]{c}, g.queue[:n]...)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()

	g.run(calls)
	for _, o := range calls[1:] {
		o.lead <- false
	}

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.running--
		g.mu.Unlock()
		return c.Out
	}
	next := g.queue[0]
	g.queue = g.queue[1:]
	g.mu.Unlock()
	next.lead <- true
	return c.Out
}

// OneByOne runs write over calls as one batch; when it fails for a batch of
// more than one, each call is written alone, so one call's failure (a key
// already taken fails a whole statement) does not fail the others. A call
// whose write failed alone gets failed(err).
func OneByOne[I, R any](calls []*Call[I, R], write func([]*Call[I, R]) error, failed func(error) R) {
	err := write(calls)
	if err == nil {
		return
	}
	for _, c := range calls {
		if len(calls) == 1 {
			c.Out = failed(err)
		} else if err := write([]*Call[I, R]{c}); err != nil {
			c.Out = failed(err)
		}
	}
}

package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// sweepInterval is how often each shard drops the logs of idle keys.
const sweepInterval = 2 * time.Minute

// numShards spreads keys over independently locked maps so that concurrent
// callers with different credentials rarely contend.
const numShards = 32

// Memory is an in-process, exact sliding-window Limiter. For every key and
// class it keeps a log of the timestamps of the requests admitted in the last
// Window (at most the class's limit of them), so a request is admitted if and
// only if fewer than limit requests were admitted in the Window before it.
//
// Logs whose requests have all left the window are dropped by a sweep that
// runs, at most every two minutes per shard, inside Allow; no goroutine is
// started. Memory is safe for concurrent use. Its state is private to the
// process: replicas behind a load balancer each count separately.
type Memory struct {
	limits map[Class]int
	now    func() time.Time
	seed   maphash.Seed
	shards [numShards]shard
}

type bucketKey struct {
	key   string
	class Class
}

type shard struct {
	mu        sync.Mutex
	logs      map[bucketKey]*ring
	lastSweep time.Time
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns a Memory enforcing limits (requests per Window for each
// class; a class absent from limits or with a limit <= 0 is unlimited). The
// map is copied, so later changes to it have no effect. now is the clock; nil
// means time.Now.
func NewMemory(limits map[Class]int, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	m := &Memory{limits: make(map[Class]int, len(limits)), now: now, seed: maphash.MakeSeed()}
	for c, n := range limits {
		if n > 0 {
			m.limits[c] = n
		}
	}
	for i := range m.shards {
		m.shards[i].logs = make(map[bucketKey]*ring)
	}
	return m
}

// Allow counts one request by key against class's budget. It returns a
// Decision with Allowed false and a positive RetryAfter when limit requests
// were already admitted for key and class in the last Window; a denied
// request is not counted. For an unlimited class it returns Allowed true and
// Limit 0 without recording anything. The error is always nil; ctx is unused.
func (m *Memory) Allow(ctx context.Context, key string, class Class) (Decision, error) {
	return m.AllowN(ctx, key, class, 1)
}

// AllowN counts n requests at once (a JSON-RPC batch's calls): all of them
// are admitted and counted, or none is, when fewer than n fit in the
// window. n above the class's limit never fits; its RetryAfter is a full
// Window.
func (m *Memory) AllowN(_ context.Context, key string, class Class, n int) (Decision, error) {
	n = max(n, 1)
	limit := m.limits[class]
	if limit <= 0 {
		return Decision{Allowed: true}, nil
	}
	bk := bucketKey{key: key, class: class}
	sh := &m.shards[m.shardIndex(bk)]

	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := m.now()
	if sh.lastSweep.IsZero() {
		sh.lastSweep = now
	} else if now.Sub(sh.lastSweep) >= sweepInterval {
		sh.sweep(now)
	}

	log := sh.logs[bk]
	if log == nil {
		log = &ring{}
		sh.logs[bk] = log
	}
	log.expire(now)
	if log.n+n <= limit {
		for range n {
			log.push(now, limit)
		}
		return Decision{Allowed: true, Limit: limit, Remaining: limit - log.n}, nil
	}
	if n > limit {
		return Decision{Allowed: false, Limit: limit, RetryAfter: Window}, nil
	}
	// The n-th oldest entry leaving the window makes room for n.
	retry := log.at(log.n + n - limit - 1).Add(Window).Sub(now)
	// Only a clock that went backwards can push retry past Window.
	retry = min(max(retry, time.Nanosecond), Window)
	return Decision{Allowed: false, Limit: limit, Remaining: 0, RetryAfter: retry}, nil
}

// Len returns the number of key+class logs currently held, for tests and
// metrics.
func (m *Memory) Len() int {
	total := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		total += len(sh.logs)
		sh.mu.Unlock()
	}
	return total
}

// shardIndex picks the shard by credential alone: one key's classes share a
// shard, and different keys spread out.
func (m *Memory) shardIndex(bk bucketKey) int {
	return int(maphash.String(m.seed, bk.key) % numShards)
}

// sweep drops every log whose requests have all left the window. The caller
// holds sh.mu.
func (sh *shard) sweep(now time.Time) {
	for k, log := range sh.logs {
		if log.n == 0 || now.Sub(log.newest()) >= Window {
			delete(sh.logs, k)
		}
	}
	sh.lastSweep = now
}

// ring is a FIFO of admission times, oldest first. Its buffer grows on demand
// up to the class limit, so a credential that sends few requests costs little.
type ring struct {
	buf  []time.Time
	head int // index of the oldest entry
	n    int // number of entries
}

// at is the i-th oldest entry (0 is the oldest).
func (r *ring) at(i int) time.Time { return r.buf[(r.head+i)%len(r.buf)] }

func (r *ring) newest() time.Time { return r.buf[(r.head+r.n-1)%len(r.buf)] }

// expire drops the entries that are Window or more older than now.
func (r *ring) expire(now time.Time) {
	for r.n > 0 && now.Sub(r.buf[r.head]) >= Window {
		r.buf[r.head] = time.Time{}
		r.head = (r.head + 1) % len(r.buf)
		r.n--
	}
	if r.n == 0 {
		r.head = 0
	}
}

// push appends t; the caller guarantees r.n < limit.
func (r *ring) push(t time.Time, limit int) {
	if r.n == len(r.buf) {
		grown := make([]time.Time, min(max(2*len(r.buf), 4), limit))
		for i := 0; i < r.n; i++ {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = t
	r.n++
}

package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a concurrency-safe settable clock.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func allow(t *testing.T, l Limiter, key string, class Class) Decision {
	t.Helper()
	d, err := l.Allow(context.Background(), key, class)
	if err != nil {
		t.Fatalf("Allow(%q, %q): %v", key, class, err)
	}
	return d
}

func TestDefaultLimits(t *testing.T) {
	want := map[Class]int{
		"list": 120, "create": 60, "credit_debits": 120, "meter_events": 600,
		"entitlement_checks": 600, "credit_balance": 240, "mcp": 120, "catalog": 120,
		"anonymous": 1200, "oauth_register": 60, "web_session": 300,
	}
	got := DefaultLimits()
	if len(got) != len(want) {
		t.Fatalf("DefaultLimits has %d classes, want %d", len(got), len(want))
	}
	for c, n := range want {
		if got[c] != n {
			t.Errorf("DefaultLimits()[%q] = %d, want %d", c, got[c], n)
		}
	}
	got[ClassList] = 1
	if DefaultLimits()[ClassList] != 120 {
		t.Error("DefaultLimits returns a shared map")
	}
}

func TestSlidingWindowExact(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(map[Class]int{ClassCreate: 3}, clk.Now)

	// Requests at t=0s, 10s, 20s fill the budget.
	for i, wantRemaining := range []int{2, 1, 0} {
		d := allow(t, m, "k", ClassCreate)
		if !d.Allowed || d.Limit != 3 || d.Remaining != wantRemaining || d.RetryAfter != 0 {
			t.Fatalf("request %d: got %+v, want allowed with remaining %d", i, d, wantRemaining)
		}
		clk.Advance(10 * time.Second)
	}
	// t=30s: full; the t=0 request leaves the window at t=60s.
	d := allow(t, m, "k", ClassCreate)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter != 30*time.Second || d.RetryAfterSeconds() != 30 {
		t.Fatalf("at 30s: got %+v, want denied, retry after 30s", d)
	}
	// A denied request is not counted: still 30s → 1ns before 60s.
	clk.Advance(30*time.Second - time.Nanosecond)
	d = allow(t, m, "k", ClassCreate)
	if d.Allowed || d.RetryAfter != time.Nanosecond || d.RetryAfterSeconds() != 1 {
		t.Fatalf("just before 60s: got %+v, want denied, retry after 1ns (1s rounded)", d)
	}
	// Exactly 60s after the first request, it no longer counts.
	clk.Advance(time.Nanosecond)
	d = allow(t, m, "k", ClassCreate)
	if !d.Allowed || d.Remaining != 0 {
		t.Fatalf("at 60s: got %+v, want allowed with remaining 0", d)
	}
	// Next slot frees at 70s (the t=10s request).
	d = allow(t, m, "k", ClassCreate)
	if d.Allowed || d.RetryAfter != 10*time.Second {
		t.Fatalf("at 60s, second: got %+v, want denied, retry after 10s", d)
	}
	// After a full idle window the whole budget is back.
	clk.Advance(2 * Window)
	for i := 0; i < 3; i++ {
		if d := allow(t, m, "k", ClassCreate); !d.Allowed {
			t.Fatalf("after idle, request %d denied: %+v", i, d)
		}
	}
}

func TestRetryAfterSecondsRoundsUp(t *testing.T) {
	cases := []struct {
		d    Decision
		want int
	}{
		{Decision{Allowed: true}, 0},
		{Decision{RetryAfter: 0}, 1},
		{Decision{RetryAfter: time.Millisecond}, 1},
		{Decision{RetryAfter: time.Second}, 1},
		{Decision{RetryAfter: time.Second + time.Nanosecond}, 2},
		{Decision{RetryAfter: 59500 * time.Millisecond}, 60},
	}
	for _, c := range cases {
		if got := c.d.RetryAfterSeconds(); got != c.want {
			t.Errorf("%+v.RetryAfterSeconds() = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestIsolation(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(map[Class]int{ClassCreate: 2, ClassList: 1}, clk.Now)
	for i := 0; i < 2; i++ {
		allow(t, m, "a", ClassCreate)
	}
	if d := allow(t, m, "a", ClassCreate); d.Allowed {
		t.Fatal("key a, create: third request allowed")
	}
	// Another key has its own budget.
	if d := allow(t, m, "b", ClassCreate); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("key b, create: got %+v", d)
	}
	// Another class has its own budget.
	if d := allow(t, m, "a", ClassList); !d.Allowed || d.Limit != 1 || d.Remaining != 0 {
		t.Fatalf("key a, list: got %+v", d)
	}
	if d := allow(t, m, "a", ClassList); d.Allowed {
		t.Fatal("key a, list: second request allowed")
	}
	// Key and class are not confused by concatenation.
	m2 := NewMemory(map[Class]int{"x": 1, "bx": 1}, clk.Now)
	allow(t, m2, "ab", "x")
	if d := allow(t, m2, "a", "bx"); !d.Allowed {
		t.Fatal(`key "a" class "bx" shares a budget with key "ab" class "x"`)
	}
}

func TestUnlimited(t *testing.T) {
	limits := map[Class]int{ClassList: 0, ClassCreate: -5}
	m := NewMemory(limits, newFakeClock().Now)
	limits[ClassMCP] = 1 // NewMemory copied the map
	for _, c := range []Class{ClassList, ClassCreate, ClassMCP, "unknown"} {
		for i := 0; i < 1000; i++ {
			d := allow(t, m, "k", c)
			if !d.Allowed || !d.Unlimited() || d.Limit != 0 || d.RetryAfter != 0 {
				t.Fatalf("class %q request %d: got %+v, want unlimited", c, i, d)
			}
		}
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("unlimited classes recorded %d logs", n)
	}
}

func TestNilClockUsesTimeNow(t *testing.T) {
	m := NewMemory(map[Class]int{ClassMCP: 1}, nil)
	if d := allow(t, m, "k", ClassMCP); !d.Allowed {
		t.Fatal("first request denied")
	}
	d := allow(t, m, "k", ClassMCP)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > Window {
		t.Fatalf("second request: got %+v", d)
	}
}

func TestIdleKeysEvicted(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(DefaultLimits(), clk.Now)
	for i := 0; i < 10000; i++ {
		allow(t, m, fmt.Sprintf("key-%d", i), ClassMeterEvents)
	}
	if n := m.Len(); n != 10000 {
		t.Fatalf("Len = %d, want 10000", n)
	}
	// Keep one key active across the sweep.
	clk.Advance(sweepInterval - time.Second)
	allow(t, m, "busy", ClassMeterEvents)
	clk.Advance(time.Second)
	// Sweeps run per shard on Allow; touch enough keys to reach every shard.
	for i := 0; i < 10*numShards; i++ {
		allow(t, m, fmt.Sprintf("fresh-%d", i), ClassList)
	}
	if n := m.Len(); n != 10*numShards+1 {
		t.Fatalf("after sweep Len = %d, want %d (idle keys not evicted)", n, 10*numShards+1)
	}
	if d := allow(t, m, "busy", ClassMeterEvents); d.Remaining != 598 {
		t.Fatalf("busy key lost its log: %+v", d)
	}
}

func TestConcurrentNeverExceedsLimit(t *testing.T) {
	const limit, goroutines, perG, keys = 50, 64, 40, 4
	clk := newFakeClock()
	m := NewMemory(map[Class]int{ClassDebit: limit}, clk.Now)
	var admitted [keys]atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				k := (g + i) % keys
				d, err := m.Allow(context.Background(), fmt.Sprint("key-", k), ClassDebit)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted[k].Add(1)
				} else if d.RetryAfter <= 0 {
					t.Errorf("denied with RetryAfter %v", d.RetryAfter)
				}
			}
		}()
	}
	wg.Wait()
	for k := range admitted {
		if got := admitted[k].Load(); got != limit {
			t.Errorf("key-%d: admitted %d, want exactly %d", k, got, limit)
		}
	}
}

func TestConcurrentSlidingClock(t *testing.T) {
	// The clock moves while goroutines race; the log of admissions must stay
	// in order, within one Window, and never above the limit.
	const limit = 20
	clk := newFakeClock()
	m := NewMemory(map[Class]int{ClassMCP: limit}, clk.Now)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if g == 0 {
					clk.Advance(700 * time.Millisecond)
				}
				if d, _ := m.Allow(context.Background(), "k", ClassMCP); d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	// 140s of clock: at most limit per started Window.
	if n := admitted.Load(); n < limit || n > 3*limit {
		t.Fatalf("admitted %d over 140s with limit %d per minute", n, limit)
	}
	bk := bucketKey{"k", ClassMCP}
	sh := &m.shards[m.shardIndex(bk)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := sh.logs[bk]
	if r.n > limit {
		t.Fatalf("log holds %d entries, limit %d", r.n, limit)
	}
	for i := 1; i < r.n; i++ {
		prev, cur := r.buf[(r.head+i-1)%len(r.buf)], r.buf[(r.head+i)%len(r.buf)]
		if cur.Before(prev) {
			t.Fatalf("log out of order at %d: %v before %v", i, cur, prev)
		}
	}
	if r.n > 0 && r.newest().Sub(r.at(0)) >= Window {
		t.Fatalf("log spans %v, not within one Window", r.newest().Sub(r.at(0)))
	}
}

func BenchmarkMemoryAllowSingleKey(b *testing.B) {
	m := NewMemory(map[Class]int{ClassMeterEvents: 600}, nil)
	ctx := context.Background()
	for b.Loop() {
		m.Allow(ctx, "sk_test_bench", ClassMeterEvents)
	}
}

func BenchmarkMemoryAllowParallelManyKeys(b *testing.B) {
	m := NewMemory(DefaultLimits(), nil)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("sk_test_%04d", i)
	}
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := int(next.Add(1)) * 7919
		for pb.Next() {
			m.Allow(ctx, keys[i%len(keys)], ClassMeterEvents)
			i++
		}
	})
}

// A batch counts each of its calls: n at once fit or none does, and the
// wait is until enough of the window's entries leave it.
func TestAllowN(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	m := NewMemory(map[Class]int{ClassMCP: 10}, func() time.Time { return now })
	ctx := context.Background()
	if d, _ := m.AllowN(ctx, "k", ClassMCP, 11); d.Allowed || d.RetryAfter != Window {
		t.Fatalf("more than the limit at once: %+v", d)
	}
	if d, _ := m.AllowN(ctx, "k", ClassMCP, 6); !d.Allowed || d.Remaining != 4 {
		t.Fatalf("6 of 10: %+v", d)
	}
	now = now.Add(10 * time.Second)
	if d, _ := m.AllowN(ctx, "k", ClassMCP, 3); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("3 more: %+v", d)
	}
	if d, _ := m.AllowN(ctx, "k", ClassMCP, 2); d.Allowed || d.RetryAfter != 50*time.Second {
		t.Fatalf("2 more with room for 1: %+v", d)
	}
	if d, _ := m.Allow(ctx, "k", ClassMCP); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("the last one: %+v", d)
	}
}

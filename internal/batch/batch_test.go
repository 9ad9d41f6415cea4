package batch_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/batch"
)

// Every call gets its own result, no batch exceeds max, no more than
// leaders batches run at once, and every batch starts after each of its
// calls arrived (a batched read then sees what was committed before).
func TestGroupBatchesConcurrentCalls(t *testing.T) {
	t.Parallel()
	const callers, perCaller, leaders, max = 32, 200, 2, 8
	var (
		clock             atomic.Int64 // a logical clock: arrivals and batch starts tick it
		running, peak     atomic.Int64
		batches, combined atomic.Int64
		first             sync.Once
	)
	type in struct {
		n       int
		arrived int64
	}
	var g *batch.Group[in, int]
	g = batch.New(func(calls []*batch.Call[in, int]) {
		// The first batch holds its lead until the others queue, so
		// later batches are sure to combine calls.
		first.Do(func() {
			deadline := time.Now().Add(10 * time.Second)
			for g.Queued() < callers-leaders && time.Now().Before(deadline) {
				runtime.Gosched()
			}
		})
		started := clock.Add(1)
		if r := running.Add(1); r > peak.Load() {
			peak.Store(r)
		}
		defer running.Add(-1)
		if len(calls) > max {
			t.Errorf("batch of %d calls, max %d", len(calls), max)
		}
		batches.Add(1)
		if len(calls) > 1 {
			combined.Add(1)
		}
		for _, c := range calls {
			if c.In.arrived >= started {
				t.Errorf("call arrived at %d, after its batch started at %d", c.In.arrived, started)
			}
			c.Out = c.In.n * 2
		}
	}, leaders, max)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perCaller {
				n := i*perCaller + j
				if got := g.Do(in{n: n, arrived: clock.Add(1)}); got != n*2 {
					t.Errorf("call %d got %d", n, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > leaders {
		t.Errorf("%d batches ran at once, at most %d allowed", p, leaders)
	}
	if combined.Load() == 0 {
		t.Errorf("%d batches, none with more than one call: nothing was batched", batches.Load())
	}
}

// A call alone is its own batch, run on the caller's goroutine at once.
func TestGroupAloneRunsAtOnce(t *testing.T) {
	t.Parallel()
	var sizes []int
	g := batch.New(func(calls []*batch.Call[string, string]) {
		sizes = append(sizes, len(calls))
		for _, c := range calls {
			c.Out = c.In + "!"
		}
	}, 0, 0)
	for _, s := range []string{"a", "b", "c"} {
		if got := g.Do(s); got != s+"!" {
			t.Fatalf("Do(%q) = %q", s, got)
		}
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1 {
		t.Fatalf("batch sizes %v, want three batches of one", sizes)
	}
}

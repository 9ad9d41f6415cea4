package cmd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// tailAgainst runs `events tail --after evt_0` against handler until the
// waits it asks for add up to a minute, without sleeping, and returns how
// many polls it made and the waits.
func tailAgainst(t *testing.T, handler func(w http.ResponseWriter, poll int64)) (int64, []time.Duration) {
	t.Helper()
	var polls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		handler(w, polls.Add(1))
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	var total time.Duration
	tl := &tailer{
		o:  &tailOptions{After: "evt_0", Interval: time.Second},
		c:  client.New(srv.URL, testKey, client.WithMaxRetries(0)),
		io: &IO{Out: &syncBuffer{}, Err: &syncBuffer{}},
		sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			if total += d; total >= time.Minute {
				cancel()
				return context.Canceled
			}
			return nil
		},
	}
	if err := tl.run(ctx); err != nil {
		t.Fatal(err)
	}
	return polls.Load(), waits
}

const emptyEvents = `{"object":"list","data":[],"has_more":false,"next_cursor":null}`

// An idle tail backs off to one poll every 3 s: at most about 20 requests
// a minute, so two tails on one key stay far inside its 120 a minute.
func TestEventsTailIdleBudget(t *testing.T) {
	t.Parallel()
	polls, waits := tailAgainst(t, func(w http.ResponseWriter, _ int64) { fmt.Fprint(w, emptyEvents) })
	if polls > 21 {
		t.Errorf("an idle minute took %d polls (waits %v); want at most 21", polls, waits)
	}
	if waits[0] != time.Second || waits[len(waits)-1] != tailIdleMax {
		t.Errorf("waits %v: want 1s first, growing to %v", waits, tailIdleMax)
	}
}

// While events arrive the tail polls every --interval, and slows down
// again once they stop.
func TestEventsTailFastWhileFlowing(t *testing.T) {
	t.Parallel()
	_, waits := tailAgainst(t, func(w http.ResponseWriter, poll int64) {
		if poll > 10 {
			fmt.Fprint(w, emptyEvents)
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"event","id":"evt_%d","type":"invoice.created","created_at":"2026-11-22T03:49:26Z","data":{}}],"has_more":false,"next_cursor":null}`, poll)
	})
	for i, d := range waits[:10] {
		if d != time.Second {
			t.Fatalf("wait %d after an event was %v, want 1s (waits %v)", i, d, waits)
		}
	}
	if last := waits[len(waits)-1]; last != tailIdleMax {
		t.Errorf("after the events stopped the wait is %v, want %v", last, tailIdleMax)
	}
}

// Rate limited, the tail waits as long as the API's retry-after says
// rather than its own shorter backoff.
func TestEventsTailHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	polls, waits := tailAgainst(t, func(w http.ResponseWriter, poll int64) {
		if poll%2 == 1 {
			w.Header().Set("Retry-After", "17")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":"rate_limited","message":"slow down"}}`)
			return
		}
		fmt.Fprint(w, emptyEvents)
	})
	if waits[0] != 17*time.Second {
		t.Errorf("first wait after a 429 with retry-after 17 was %v (waits %v)", waits[0], waits)
	}
	if polls > 8 {
		t.Errorf("%d polls in a rate-limited minute (waits %v)", polls, waits)
	}
}

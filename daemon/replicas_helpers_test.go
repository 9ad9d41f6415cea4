package daemon_test

import (
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// Helpers of the replica fault test (replicas_faults_test.go): the set of
// replicas the clients alternate between, a client that retries an
// unanswered write on the other replica with the same idempotency key, and
// a webhook receiver that times every attempt.

// replicaSet is the running `tollgate serve` processes; a killed one keeps
// its old address until its successor serves, as a load balancer without
// health checks would, so clients meet refused connections too.
type replicaSet struct {
	mu    sync.Mutex
	procs []*exec.Cmd
	urls  []string
	next  atomic.Uint64
}

// pick returns the address of the next replica in turn.
func (r *replicaSet) pick() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.urls[int(r.next.Add(1))%len(r.urls)]
}

func (r *replicaSet) set(i int, p *exec.Cmd, url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.procs[i], r.urls[i] = p, url
}

func (r *replicaSet) proc(i int) *exec.Cmd {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.procs[i]
}

// loadClient makes API calls on alternating replicas and counts the
// acknowledged ones.
type loadClient struct {
	t     *testing.T
	set   *replicaSet
	key   string
	http  *http.Client
	acked atomic.Int64
	// retried counts calls that needed more than one try (a replica died
	// under them or refused the connection).
	retried atomic.Int64
}

// do runs call on one replica after the other until one answers 2xx; a
// failed try is retried only when it may not have been answered (no
// response, 5xx). A 4xx fails the test: the load sends only valid writes.
func (lc *loadClient) do(what string, call func(c *client.Client) error) bool {
	deadline := time.Now().Add(60 * time.Second)
	for try := 0; ; try++ {
		c := client.New(lc.set.pick(), lc.key, client.WithMaxRetries(0), client.WithHTTPClient(lc.http))
		err := call(c)
		if err == nil {
			lc.acked.Add(1)
			if try > 0 {
				lc.retried.Add(1)
			}
			return true
		}
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.Status < 500 {
			lc.t.Errorf("%s: %v", what, err)
			return false
		}
		if time.Now().After(deadline) {
			lc.t.Errorf("%s: no replica answered in a minute: %v", what, err)
			return false
		}
		time.Sleep(10 * time.Millisecond) // back off before the other replica
	}
}

// timedAttempt is one request the receiver got.
type timedAttempt struct {
	delivery   string
	attempt    int
	start, end time.Time
	status     int  // what the receiver answered; 0 when the sender went away first
	cut        bool // the connection closed before the answer was written
}

// timingReceiver answers webhook attempts after a short hold (so some are
// in flight whenever a replica is killed), fails the first attempt of one
// delivery in five, and logs every attempt with its start and end.
type timingReceiver struct {
	url      string
	inFlight atomic.Int64
	mu       sync.Mutex
	log      []timedAttempt
}

func newTimingReceiver(t *testing.T) *timingReceiver {
	rc := &timingReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := timedAttempt{delivery: r.Header.Get("wc-delivery-id"), start: time.Now()}
		a.attempt, _ = strconv.Atoi(r.Header.Get("wc-delivery-attempt"))
		rc.inFlight.Add(1)
		defer rc.inFlight.Add(-1)
		_, _ = io.Copy(io.Discard, r.Body)
		h := fnv.New32a()
		_, _ = io.WriteString(h, a.delivery)
		hold := time.Duration((h.Sum32()+uint32(a.attempt)*7919)%150) * time.Millisecond
		select {
		case <-time.After(hold):
			a.status = 200
			if a.attempt == 1 && h.Sum32()%5 == 0 {
				a.status = 500
			}
			w.WriteHeader(a.status)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		case <-r.Context().Done():
			a.cut = true
		}
		a.end = time.Now()
		rc.mu.Lock()
		rc.log = append(rc.log, a)
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// byDelivery returns the attempts of each delivery, in the order they
// started.
func (rc *timingReceiver) byDelivery() map[string][]timedAttempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string][]timedAttempt{}
	for _, a := range rc.log {
		out[a.delivery] = append(out[a.delivery], a)
	}
	for _, as := range out {
		sort.Slice(as, func(i, j int) bool { return as[i].start.Before(as[j].start) })
	}
	return out
}

// deliveryFigures is what the receiver saw of the deliveries.
type deliveryFigures struct {
	deliveries int
	requests   int
	// overlaps lists deliveries with an attempt that started before the
	// previous one ended.
	overlaps []string
	// resent counts deliveries POSTed again after the receiver had
	// answered them 2xx (at-least-once allows it: the replica died before
	// putting the answer on record).
	resent int
	// resentAges says, for each of them, how long before the next kill
	// the 2xx was written: the window in which an answer is lost.
	resentAges []time.Duration
	// maxResume is the longest wait between an attempt whose answer a
	// dying replica lost (cut, or answered but never recorded) and the
	// next attempt of its delivery.
	maxResume time.Duration
	cut       int
	// unresumed lists deliveries whose last attempt was cut.
	unresumed []string
}

// figures sums up the receiver's log; killedAt are the kills' times, to
// tell how long before a kill a 2xx that was sent again had been written.
func (rc *timingReceiver) figures(killedAt []time.Time) deliveryFigures {
	var f deliveryFigures
	for id, as := range rc.byDelivery() {
		f.deliveries++
		f.requests += len(as)
		acked, resent := false, false
		for i, a := range as {
			if i > 0 && a.start.Before(as[i-1].end) {
				f.overlaps = append(f.overlaps, id)
			}
			if acked && !resent {
				resent = true // sent again after a 2xx
				if age, ok := beforeKill(as[i-1].end, killedAt); ok {
					f.resentAges = append(f.resentAges, age)
				}
			}
			ok := a.status >= 200 && a.status < 300
			acked = acked || ok
			if a.cut {
				f.cut++
			}
			if !a.cut && !(ok && i+1 < len(as)) {
				continue // answered, and that answer was kept
			}
			if i+1 == len(as) {
				f.unresumed = append(f.unresumed, id)
				continue
			}
			f.maxResume = max(f.maxResume, as[i+1].start.Sub(a.start))
		}
		if resent {
			f.resent++
		}
	}
	return f
}

// beforeKill is how long before the first kill after at that kill came.
func beforeKill(at time.Time, kills []time.Time) (time.Duration, bool) {
	for _, k := range kills {
		if !k.Before(at) {
			return k.Sub(at), true
		}
	}
	return 0, false
}

package daemon

import (
	"time"
)

// Per-endpoint concurrency. An endpoint that hangs holds a sender for the
// whole attempt timeout, so senders are shared out by how endpoints behave:
//
//   - An endpoint starts with paceStart attempts in flight; each answer in
//     time (any status, or a quick error) raises that by one, up to the
//     configured per-endpoint maximum.
//   - An attempt that took longer than slowAnswer (a timeout, mostly) cuts
//     the endpoint back to one attempt in flight until it answers in time
//     again.
//   - No endpoint holds more than an equal share of the senders among the
//     endpoints in play (with work due or in flight).
//   - Endpoints that have not answered in time yet (new ones, slow ones)
//     together hold at most half the senders: however many hang, the other
//     half serves endpoints that answer.
//
// The state is the process's own: a replica learns endpoints afresh.

const (
	// paceStart is the attempts a new endpoint may have in flight.
	paceStart = 2
	// slowAnswer is the latency past which an attempt counts as slow.
	slowAnswer = deliveryTimeout / 2
	// paceForget is how long an idle endpoint's pace is remembered.
	paceForget = 30 * time.Minute
)

// pace is one endpoint's state; guarded by deliverer.mu.
type pace struct {
	inflight int
	limit    int  // attempts it may have in flight
	proven   bool // its latest attempt was answered in time
	touched  time.Time
}

// pacer holds every endpoint's pace; guarded by deliverer.mu.
type pacer struct {
	workers, max int
	eps          map[string]*pace
	pruned       time.Time
}

func newPacer(workers, max int) *pacer {
	return &pacer{workers: workers, max: max, eps: map[string]*pace{}}
}

func (p *pacer) get(ep string) *pace {
	e := p.eps[ep]
	if e == nil {
		e = &pace{limit: min(paceStart, p.max)}
		p.eps[ep] = e
	}
	return e
}

// full lists the endpoints that may start nothing now, whose due
// deliveries the claim need not even read (they would crowd out the
// others').
func (p *pacer) full() []string {
	inPlay, unproven := p.inPlay()
	share := max(1, p.workers/max(1, inPlay))
	var out []string
	for ep, e := range p.eps {
		if e.inflight >= min(e.limit, share, p.max) || (!e.proven && unproven >= p.probation()) {
			out = append(out, ep)
		}
	}
	return out
}

// probation is how many senders endpoints not proven may hold together.
func (p *pacer) probation() int { return max(1, p.workers/2) }

// inPlay counts the endpoints with attempts in flight, and the attempts in
// flight of endpoints not proven.
func (p *pacer) inPlay() (endpoints, unproven int) {
	for _, e := range p.eps {
		if e.inflight > 0 {
			endpoints++
		}
		if !e.proven {
			unproven += e.inflight
		}
	}
	return endpoints, unproven
}

// room shares out the senders free now among the endpoints with due
// deliveries (see the rules above).
func (p *pacer) room(due []string) map[string]int {
	inPlay, unproven := p.inPlay()
	for _, ep := range due {
		if e := p.eps[ep]; e == nil || e.inflight == 0 {
			inPlay++
		}
	}
	share := max(1, p.workers/max(1, inPlay))
	probation := p.probation() - unproven
	out := make(map[string]int, len(due))
	for _, ep := range due {
		e := p.get(ep)
		n := min(e.limit, share, p.max) - e.inflight
		if !e.proven {
			n = min(n, probation)
			probation -= max(n, 0)
		}
		out[ep] = n
	}
	return out
}

// started counts an attempt of ep in flight.
func (p *pacer) started(ep string, now time.Time) {
	e := p.get(ep)
	e.inflight++
	e.touched = now
}

// answered adjusts ep's limit by how long its attempt took.
func (p *pacer) answered(ep string, latency time.Duration) {
	e := p.get(ep)
	if latency > slowAnswer {
		e.limit, e.proven = 1, false
		return
	}
	e.limit, e.proven = min(e.limit+1, p.max), true
}

// finished ends an attempt of ep (once it is on record), and now and then
// forgets endpoints idle for paceForget.
func (p *pacer) finished(ep string, now time.Time) {
	if e := p.eps[ep]; e != nil {
		e.inflight = max(e.inflight-1, 0)
		e.touched = now
	}
	if now.Sub(p.pruned) < time.Minute {
		return
	}
	p.pruned = now
	for k, e := range p.eps {
		if e.inflight == 0 && now.Sub(e.touched) > paceForget {
			delete(p.eps, k)
		}
	}
}

package daemon

import (
	"time"

	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// When the delivery job claims. A claim reads the due queue, and the read
// walks every due delivery of the endpoints that have no room, to skip
// them; so under a backlog that outruns an endpoint, a claim is worth
// making only when there is room for a good part of it. Without that, a
// burst of writes woke the job once per batch of events, each claim walking
// the backlog to take nothing, and each recording freed a slot or two for
// a claim to fill: in the shared harness, with one endpoint at its limit,
// 2,007 reads of the queue led to 792 claims in a 10 s phase, 40% of the
// database's time on deliveries.

// claimBite is the share of the attempts in flight at a short claim that
// must be released before the next one reads the queue: a quarter.
const claimBite = 4

// lastClaim is what the latest claim left: whether it was short of room
// for what was due, the releases counted when it began, the attempts then
// in flight and when it ended.
type lastClaim struct {
	short    bool
	released uint64
	held     int
	at       time.Time
}

// hold reports whether a claim now would take only a small bite of what
// the latest one left behind for want of room: it was short, attempts are
// still in flight (their recordings wake the job again), fewer than a
// claimBite share of them were released since, and it is not yet
// inFlightWait old. New deliveries of endpoints with room wait at most that
// long, or until enough is released. Holding, it leaves the job to be woken
// by the next recording. Called with d.mu held.
func (d *deliverer) hold(now time.Time) bool {
	l := d.last
	if !l.short || len(d.slots) == 0 || now.Sub(l.at) >= inFlightWait {
		return false
	}
	if d.released-l.released >= uint64(max(1, l.held/claimBite)) {
		return false
	}
	d.leftBehind = true
	return true
}

// claimed notes whether the claim that began when released attempts had
// been freed left deliveries behind, and says whether it must claim again
// at once: it did, and room was freed since it began (hold may yet find
// that too little to read the queue for).
func (d *deliverer) claimed(released uint64, short bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leftBehind = short
	d.last = lastClaim{short: short, released: released, held: len(d.slots), at: time.Now()}
	return short && d.released != released
}

// release frees the slot of a recorded attempt. An attempt holds its slot
// (and its endpoint's share) until it is on record, so the next claim sees
// the delivery's new state.
func (d *deliverer) release(job webhooks.Job) {
	<-d.slots
	d.mu.Lock()
	d.pacer.finished(job.EndpointID, time.Now())
	d.released++
	d.mu.Unlock()
}

// wake wakes the job after a batch of answers was recorded (or given up
// on) if there may be work for it: the latest claim left deliveries behind
// for want of the room now freed, or an answer scheduled a retry (which
// may be the earliest due, sooner than the job means to look).
func (d *deliverer) wake(batch []webhooks.Answer) {
	d.mu.Lock()
	wake := d.leftBehind
	d.leftBehind = false
	d.mu.Unlock()
	for _, a := range batch {
		wake = wake || !a.Result.OK()
	}
	if wake {
		d.kick()
	}
}

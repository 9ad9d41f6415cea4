package daemon

import (
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// The local hand-off (see package events): a statement that writes events
// and their deliveries reserves room here first, inserts as many of its
// deliveries leased to this process as the room allows, and once its
// transaction commits hands them to Start, which sends them at once like
// claimed ones. The room is the senders and the endpoints' shares the
// claim uses (reserved the same way), so a handed-off attempt never waits
// for a sender, and never runs past its lease.

var _ events.Handoff = (*deliverer)(nil)

// Reserve implements events.Handoff: room for first attempts of the
// merchant's endpoints, none once the recorder has stopped. The attempts
// it may start are counted among the senders (d.sending) at once, so the
// recorder's stop waits for them.
func (d *deliverer) Reserve(merchantID string, most int) events.Reservation {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return events.Reservation{}
	}
	eps, room := d.pacer.handoff(merchantID, most, cap(d.slots)-len(d.slots))
	total := 0
	for _, n := range room {
		total += int(n)
	}
	// Tokens are taken only with mu held: the free slots read above are
	// still free.
	if held := d.takeSlots(total); held != total {
		d.giveSlots(held)
		for i, ep := range eps {
			d.pacer.settle(ep, int(room[i]), 0, time.Now())
		}
		return events.Reservation{}
	}
	d.sending.Add(total)
	return events.Reservation{Endpoints: eps, Room: room, Lease: deliveryLease, At: time.Now()}
}

// Start implements events.Handoff: it starts the leased attempts and
// gives back the room they did not use.
func (d *deliverer) Start(r events.Reservation, leased []events.Leased) {
	used := map[string]int{}
	for _, l := range leased {
		used[l.EndpointID]++
	}
	d.settle(r, used)
	// The leases began after r was made; a transaction that committed
	// late (a long one around a credit grant) leaves less of them than
	// the attempt's timeout, and the attempt ends before they do.
	until := r.At.Add(r.Lease - time.Second)
	for _, l := range leased {
		go d.attemptUntil(handedJob(l), until)
	}
}

// Release implements events.Handoff.
func (d *deliverer) Release(r events.Reservation) { d.settle(r, nil) }

// settle ends reservation r, of which used (by endpoint) was leased.
func (d *deliverer) settle(r events.Reservation, used map[string]int) {
	now := time.Now()
	unused := 0
	d.mu.Lock()
	for i, ep := range r.Endpoints {
		n := int(r.Room[i])
		d.pacer.settle(ep, n, used[ep], now)
		unused += n - min(used[ep], n)
	}
	d.mu.Unlock()
	d.giveSlots(unused)
	d.sending.Add(-unused)
}

// handedJob is the job of a handed-off delivery: its first attempt, as a
// claim of it would return it.
func handedJob(l events.Leased) webhooks.Job {
	return webhooks.Job{
		Delivery: webhooks.Delivery{MerchantID: l.MerchantID, Mode: l.Mode, ID: l.ID, EventID: l.Event.ID, EventType: l.Event.Type,
			EndpointID: l.EndpointID, Status: webhooks.StatusPending, Attempts: 1},
		Attempt: 1, URL: l.URL, Secrets: l.Secrets,
		Event: events.Event{MerchantID: l.MerchantID, Mode: l.Mode, ID: l.Event.ID, Seq: l.Event.Seq, Type: l.Event.Type,
			Data: l.Event.Data, CreatedAt: l.Event.CreatedAt, OccurredAt: l.Event.OccurredAt},
	}
}

// takeSlots takes up to n free senders without waiting and returns how
// many it took; call it with mu held.
func (d *deliverer) takeSlots(n int) int {
	for i := range n {
		select {
		case d.slots <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// giveSlots gives back n senders taken and not used.
func (d *deliverer) giveSlots(n int) {
	for range n {
		<-d.slots
	}
}

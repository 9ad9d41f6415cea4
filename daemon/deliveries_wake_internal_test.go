package daemon

import (
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// A recording wakes the delivery job only when the latest claim left
// deliveries behind for want of room, or an answer scheduled a retry; a
// claim during which room was freed claims again at once, since the
// recording that freed it may have found no reason to wake it.
func TestRecordingWakesOnlyWhenThereMayBeWork(t *testing.T) {
	t.Parallel()
	kicks := 0
	d := &deliverer{kick: func() { kicks++ }, slots: make(chan struct{}, 4), pacer: newPacer(4, 4)}
	ok := []webhooks.Answer{{Job: webhooks.Job{Delivery: webhooks.Delivery{EndpointID: "we_a"}}, Result: webhooks.Result{Status: 200}}}
	failed := []webhooks.Answer{{Job: webhooks.Job{Delivery: webhooks.Delivery{EndpointID: "we_a"}}, Result: webhooks.Result{Status: 500}}}

	if again := d.claimed(d.released, false); again {
		t.Fatal("a claim that left nothing behind claims again")
	}
	d.wake(ok)
	if kicks != 0 {
		t.Fatalf("recording after a claim that left nothing behind: %d wake-ups, want none", kicks)
	}
	d.wake(failed)
	if kicks != 1 {
		t.Fatalf("recording a failed attempt (a retry scheduled): %d wake-ups, want 1", kicks)
	}

	d.claimed(d.released, true)
	d.wake(ok)
	if kicks != 2 {
		t.Fatalf("recording after a claim short of room: %d wake-ups, want 2", kicks)
	}
	d.wake(ok)
	if kicks != 2 {
		t.Fatalf("a second recording after the same short claim: %d wake-ups, want 2", kicks)
	}

	// Room freed while a short claim ran: it claims again itself.
	began := d.released
	d.slots <- struct{}{}
	d.release(ok[0].Job)
	if again := d.claimed(began, true); !again {
		t.Fatal("a short claim during which room was freed does not claim again")
	}
	if again := d.claimed(d.released, true); again {
		t.Fatal("a short claim during which no room was freed claims again at once")
	}
}

// The answers to the attempts one claim gave an endpoint are handed on
// together, by the last of them; one that waited its limit for the others
// hands on what has come, and the last then hands on only the rest.
func TestAnswersOfAClaimGoTogether(t *testing.T) {
	t.Parallel()
	g := newAnswers()
	g.left = 3
	for i := range 2 {
		if got := g.add(webhooks.Answer{Job: webhooks.Job{Attempt: i}}); got != nil {
			t.Fatalf("answer %d of 3 handed on %d answers", i+1, len(got))
		}
	}
	if got := g.add(webhooks.Answer{Job: webhooks.Job{Attempt: 2}}); len(got) != 3 {
		t.Fatalf("the last answer handed on %d answers, want 3", len(got))
	}
	if got := g.wait(time.Hour); got != nil {
		t.Fatalf("a wait after the last answer handed on %d answers, want none", len(got))
	}

	// One attempt hangs: the answers that came go on without it.
	g = newAnswers()
	g.left = 3
	g.add(webhooks.Answer{Job: webhooks.Job{Attempt: 0}})
	g.add(webhooks.Answer{Job: webhooks.Job{Attempt: 1}})
	if got := g.wait(time.Millisecond); len(got) != 2 {
		t.Fatalf("a wait that ran out handed on %d answers, want the 2 that came", len(got))
	}
	if got := g.wait(time.Millisecond); got != nil {
		t.Fatalf("a second wait handed on %d answers again", len(got))
	}
	if got := g.add(webhooks.Answer{Job: webhooks.Job{Attempt: 2}}); len(got) != 1 || got[0].Job.Attempt != 2 {
		t.Fatalf("the late last answer handed on %v, want itself alone", got)
	}
}

// After a claim short of room, the next one waits until a quarter of the
// attempts then in flight are released (or inFlightWait has passed), and
// leaves the job to the recordings meanwhile; a claim that left nothing
// behind, or one with nothing in flight, holds nothing back.
func TestClaimWaitsForABiteOfRoom(t *testing.T) {
	t.Parallel()
	d := &deliverer{slots: make(chan struct{}, 8), pacer: newPacer(8, 8)}
	job := webhooks.Job{Delivery: webhooks.Delivery{EndpointID: "we_a"}}
	now := time.Now()
	if d.hold(now) {
		t.Fatal("holds before any claim")
	}
	for range 8 {
		d.slots <- struct{}{}
		d.pacer.started("we_a", now)
	}
	d.claimed(d.released, true)
	if !d.hold(time.Now()) {
		t.Fatal("a claim right after a short one, nothing released, reads the queue")
	}
	if !d.leftBehind {
		t.Fatal("holding does not leave the next recording to wake the job")
	}
	d.release(job)
	if !d.hold(time.Now()) {
		t.Fatal("one release of 8 in flight let a claim read the queue; want a quarter (2)")
	}
	d.release(job)
	if d.hold(time.Now()) {
		t.Fatal("a quarter of the attempts released, and the claim still holds")
	}
	if d.hold(d.last.at.Add(inFlightWait)) {
		t.Fatal("a short claim inFlightWait old still holds the next back")
	}

	d.claimed(d.released, false)
	if d.hold(time.Now()) {
		t.Fatal("a claim that left nothing behind holds the next back")
	}
	d.claimed(d.released, true)
	for len(d.slots) > 0 {
		d.release(job)
	}
	d.last.released = d.released
	if d.hold(time.Now()) {
		t.Fatal("holds with no attempt in flight, when no recording will wake the job")
	}
}

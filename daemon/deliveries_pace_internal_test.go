package daemon

import (
	"testing"
	"time"
)

// A new endpoint starts small and grows with answers in time; a slow
// answer cuts it to one attempt until it answers in time again; shares
// shrink as endpoints come into play, and endpoints not proven hold at most
// half the senders between them.
func TestPacer(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p := newPacer(64, 32)
	if got := p.room([]string{"a"})["a"]; got != paceStart {
		t.Fatalf("new endpoint room %d, want %d", got, paceStart)
	}
	for range 40 {
		p.answered("a", time.Millisecond)
	}
	if got := p.room([]string{"a"})["a"]; got != 32 {
		t.Errorf("proven endpoint alone: room %d, want the maximum 32", got)
	}
	if got := p.room([]string{"a", "b", "c", "d"})["a"]; got != 16 {
		t.Errorf("four in play: room %d, want 16", got)
	}
	p.started("a", now)
	p.answered("a", deliveryTimeout)
	if got := p.room([]string{"a"})["a"]; got != 0 {
		t.Errorf("slow endpoint with one in flight: room %d, want 0", got)
	}
	if full := p.full(); len(full) != 1 || full[0] != "a" {
		t.Errorf("full %v, want [a]", full)
	}
	p.finished("a", now)
	p.answered("a", time.Millisecond)
	if got := p.room([]string{"a"})["a"]; got != 2 {
		t.Errorf("after an answer in time: room %d, want 2", got)
	}
	// Forty new endpoints that never answer: half the senders between them.
	q := newPacer(64, 32)
	var eps []string
	for i := range 40 {
		eps = append(eps, string(rune('A'+i)))
	}
	held := 0
	for _, ep := range eps {
		n := q.room([]string{ep})[ep]
		for range max(n, 0) {
			q.started(ep, now)
			held++
		}
	}
	if held != 32 {
		t.Errorf("new endpoints hold %d senders, want half of 64", held)
	}
}

package credits_test

import (
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
)

// reserveCount counts the hand-offs credit writes ask this process for.
type reserveCount struct {
	mu sync.Mutex
	n  int
}

func (h *reserveCount) Reserve(string, int) events.Reservation {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	return events.Reservation{}
}
func (h *reserveCount) Start(events.Reservation, []events.Leased) {}
func (h *reserveCount) Release(events.Reservation)                {}

func (h *reserveCount) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// A grant made in a caller's transaction runs under a savepoint, which the
// caller may roll back after the write and still commit: its deliveries
// are left to a claim, never handed off. A batched grant asks for room.
func TestNestedWriteHandsNothingOff(t *testing.T) {
	t.Parallel()
	f := setup(t)
	h := &reserveCount{}
	f.db.Provide(events.HandoffName, h)
	cus := f.customer("nested")
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		_, err := credits.GrantTx(f.ctx, tx, f.s, credits.GrantInput{Customer: ref(cus), Amount: 100}, t0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.count(); n != 0 {
		t.Fatalf("a grant under a savepoint asked for %d hand-offs, want none", n)
	}
	f.mustGrant(cus, 100, nil, t0)
	if h.count() == 0 {
		t.Fatal("a batched grant asked for no hand-off")
	}
}

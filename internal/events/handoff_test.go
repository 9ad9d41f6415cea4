package events

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// handoffCalls records what a statement's transaction handed off.
type handoffCalls struct {
	reserved, released int
	started            [][]Leased
}

func (h *handoffCalls) Reserve(string, int) Reservation {
	h.reserved++
	return Reservation{Endpoints: []string{"we_1"}, Room: []int64{1}, Lease: time.Minute, At: time.Now()}
}
func (h *handoffCalls) Start(_ Reservation, leased []Leased) { h.started = append(h.started, leased) }
func (h *handoffCalls) Release(Reservation)                  { h.released++ }

// A committed transaction hands off what its statement leased, once it has
// committed; one that rolls back hands off nothing and gives the room
// back.
func TestLeaseHandsOffOnlyOnCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	h := &handoffCalls{}
	db.Provide(HandoffName, h)
	rows := []byte(`[{"merchant_id": "m_1", "mode": "test", "id": "dlv_1", "endpoint_id": "we_1", "url": "https://x.test",
		"secrets": ["s"], "event": {"id": "evt_1", "seq": 1, "type": "t", "data": {"a": 1},
		"created_at": "2026-01-02T03:04:05.123456+00:00", "occurred_at": "2026-01-02T03:04:05.123456+00:00"}}]`)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		l := NewLease(tx, "m_1", 1)
		if n, err := l.Took(rows); err != nil || n != 1 {
			t.Errorf("took %d, %v; want 1", n, err)
		}
		if len(h.started) != 0 {
			t.Error("handed off before the commit")
		}
		return errors.New("rolled back")
	})
	if err == nil || h.reserved != 1 || h.released != 1 || len(h.started) != 0 {
		t.Fatalf("rolled back: %v, reserved %d, released %d, started %d; want the room given back and nothing started",
			err, h.reserved, h.released, len(h.started))
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := NewLease(tx, "m_1", 1).Took(rows)
		return err
	})
	if err != nil || h.released != 1 || len(h.started) != 1 || len(h.started[0]) != 1 {
		t.Fatalf("committed: %v, released %d, started %v; want the leased delivery started", err, h.released, h.started)
	}
	got := h.started[0][0]
	if got.ID != "dlv_1" || got.Event.ID != "evt_1" || string(got.Event.Data) != `{"a": 1}` || got.Event.OccurredAt.Nanosecond() != 123456000 {
		t.Errorf("leased %+v", got)
	}
	// Without a deliverer, nothing is reserved and nothing leased.
	db.Provide(HandoffName, nil)
	err = db.InTx(ctx, func(tx *store.Tx) error {
		args := NewLease(tx, "m_1", 1).Args()
		if eps := args[0].(pq.StringArray); len(eps) != 0 {
			t.Errorf("endpoints with room %v, want none", eps)
		}
		return nil
	})
	if err != nil || h.reserved != 2 {
		t.Errorf("without a deliverer: %v, reserved %d times, want 2", err, h.reserved)
	}
}

package metering

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// A batch is written first as if none of its keys were stored; one that
// replays some keys among new ones is written again with deduplication:
// the replayed events come back as their originals, a reused key with
// another event is refused, and every new event is stored and counted
// once.
func TestBatchReplayingSomeKeysStoresTheOthersOnce(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	m, _, err := Create(ctx, db, s, Input{Key: "calls", DisplayName: "calls", Aggregation: Sum}, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	g := NewIngester()
	at := now.Add(-time.Minute)
	event := func(key string, v int64) EventInput {
		k, c, ts := key, cust, at
		return EventInput{EventName: "calls", Value: &v, CustomerID: &c, Timestamp: &ts, IdempotencyKey: &k}
	}
	// An event without a timestamp is stamped now, and its replay is not
	// compared on it.
	unstamped := event("u", 7)
	unstamped.Timestamp = nil
	first, err := g.Ingest(ctx, db, s, []EventInput{event("k0", 1), event("k1", 2), event("k2", 3), unstamped}, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		if r.Err != nil || r.Event.Deduplicated {
			t.Fatalf("first batch, event %d: %+v", i, r)
		}
	}
	again, err := g.Ingest(ctx, db, s, []EventInput{event("k3", 10), event("k1", 2), event("k2", 99), event("k4", 20), event("k3", 10), unstamped}, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := again[1]; r.Err != nil || !r.Event.Deduplicated || r.Event.ID != first[1].Event.ID {
		t.Errorf("replayed k1: %+v", r)
	}
	if r := again[2]; apperr.CodeOf(r.Err) != apperr.InvalidRequest {
		t.Errorf("k2 with another value: %+v", r)
	}
	for _, i := range []int{0, 3} {
		if r := again[i]; r.Err != nil || r.Event.Deduplicated || r.Event.ID == "" {
			t.Errorf("new event %d: %+v", i, r)
		}
	}
	if r := again[4]; r.Err != nil || !r.Event.Deduplicated || r.Event.ID != again[0].Event.ID {
		t.Errorf("k3 repeated in the batch: %+v", r)
	}
	if r := again[5]; r.Err != nil || !r.Event.Deduplicated || r.Event.ID != first[3].Event.ID {
		t.Errorf("replayed u, without a timestamp: %+v", r)
	}
	var events, keys int
	if err := db.GetContext(ctx, &events, `SELECT count(*) FROM meter_events WHERE merchant_id = $1`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &keys, `SELECT count(*) FROM meter_event_keys WHERE merchant_id = $1`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if events != 6 || keys != 6 {
		t.Errorf("%d events and %d keys stored, want 6 and 6", events, keys)
	}
	a, err := Aggregate(ctx, db, s, m, cust, at.Truncate(time.Hour), at.Truncate(time.Hour).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if a.Count != 6 || fmt.Sprint(a.Sum) != "43" {
		t.Errorf("usage: %d events, sum %v; want 6 and 43", a.Count, a.Sum)
	}
}

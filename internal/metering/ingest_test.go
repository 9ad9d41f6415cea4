package metering

import (
	"context"
	"encoding/json"
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

// Each event of a batch keeps its own properties and timestamp, to the
// microsecond, whichever of its neighbours have properties (they travel
// to PostgreSQL together, as one document). A batch of one event without
// properties too.
func TestBatchKeepsEachEventsPropertiesAndTimestamp(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	if _, _, err := Create(ctx, db, s, Input{Key: "calls", DisplayName: "calls", Aggregation: Count}, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	g := NewIngester()
	props := []string{`{"a":"x,y]"}`, "", `{"b":"\u00e9\n\t\"q\"","n":[1,{"c":null}]}`, "", "", `{ "d" : 1 }`}
	var batches [][]EventInput
	for i, p := range props {
		at := now.Add(-time.Duration(i)*time.Minute - time.Duration(i*1234567+1)*time.Nanosecond*1000)
		in := EventInput{EventName: "calls", CustomerID: &cust, Timestamp: &at}
		if p != "" {
			in.Properties = json.RawMessage(p)
		}
		if len(batches) == 0 || i >= 4 {
			batches = append(batches, nil)
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], in)
	}
	for _, b := range batches {
		res, err := g.Ingest(ctx, db, s, b, now)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			var got struct {
				Props *string   `db:"properties"`
				At    time.Time `db:"event_timestamp"`
			}
			if err := db.GetContext(ctx, &got, `SELECT properties::text AS properties, event_timestamp FROM meter_events WHERE merchant_id = $1 AND id = $2`,
				s.MerchantID, r.Event.ID); err != nil {
				t.Fatal(err)
			}
			if !got.At.Equal(*b[i].Timestamp) {
				t.Errorf("event %s: stored at %s, sent %s", r.Event.ID, got.At, *b[i].Timestamp)
			}
			switch {
			case b[i].Properties == nil && got.Props != nil:
				t.Errorf("event %s: properties %s, sent none", r.Event.ID, *got.Props)
			case b[i].Properties != nil && (got.Props == nil || !jsonEqual(t, *got.Props, string(b[i].Properties))):
				t.Errorf("event %s: properties %v, sent %s", r.Event.ID, got.Props, b[i].Properties)
			}
		}
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

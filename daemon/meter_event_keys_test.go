package daemon_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// Idempotency keys are kept 35 days: pruning removes only older ones, and
// refuses a cutoff that would break that promise.
func TestPruneMeterEventKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	ctx := context.Background()
	if _, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old", "new"} {
		if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.db.Exec(`UPDATE meter_event_keys SET created_at = now() - interval '40 days' WHERE idempotency_key = 'old'`); err != nil {
		t.Fatal(err)
	}
	if _, err := metering.PruneKeys(ctx, b.db, time.Now().Add(-24*time.Hour), time.Now()); err == nil {
		t.Fatal("a cutoff inside the 35 days was accepted")
	}
	n, err := metering.PruneKeys(ctx, b.db, time.Now().Add(-metering.MaxAge-time.Hour), time.Now())
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	// The recent key still deduplicates.
	again, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: "new"})
	if err != nil || !again.Deduplicated {
		t.Fatalf("recent key lost: %+v %v", again, err)
	}
}

// An idempotency key names one event: a replay of that event (its
// properties compared as stored, whitespace, key order and number spelling
// aside; its timestamp only when the replay gives one) is deduplicated,
// and the key reused for a different event is 400 invalid_request naming
// idempotency_key, as a rejected item in a batch. The usage counted is the
// original's alone.
func TestMeterEventKeyReuse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	ctx := context.Background()
	for _, p := range []client.MeterParams{{Key: "sum", DisplayName: "Sum"}, {Key: "other", DisplayName: "Other"}} {
		if _, err := c.CreateMeter(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	ts := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano)
	orig := `{"event_name":"sum","value":5,"external_customer_id":"u1","timestamp":"` + ts + `","idempotency_key":"k","properties":{"a":1e2,"b":[1,"x"]}}`
	status, _, out := b.raw("POST", "/v1/meter-events", key, orig)
	if status != 201 {
		t.Fatalf("original: %d %s", status, out)
	}
	u2, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", ExternalCustomerID: "u2"})
	if err != nil {
		t.Fatal(err)
	}
	cus := func(s string) string { return s[strings.Index(s, `"customer_id":"`)+15:][:28] }
	same := []string{
		orig,
		`{"idempotency_key":"k","properties":{"b":[1,"x"],"a":100},"timestamp":"` + ts + `","external_customer_id":"u1","value":"5","event_name":"sum"}`,
		`{"event_name":"sum","value":5,"customer_id":"` + cus(out) + `","idempotency_key":"k","properties":{"a":100.0,"b":[1,"x"]}}`,
	}
	for _, body := range same {
		status, _, got := b.raw("POST", "/v1/meter-events", key, body)
		if status != 200 || !strings.Contains(got, `"deduplicated":true`) {
			t.Errorf("replay %s: %d %s", body, status, got)
		}
	}
	other := time.Now().UTC().Add(-2 * time.Minute).Format(time.RFC3339Nano)
	for field, body := range map[string]string{
		"event_name": `{"event_name":"other","value":5,"external_customer_id":"u1","idempotency_key":"k","properties":{"a":1e2,"b":[1,"x"]}}`,
		"customer":   `{"event_name":"sum","value":5,"customer_id":"` + *u2.CustomerID + `","idempotency_key":"k","properties":{"a":1e2,"b":[1,"x"]}}`,
		"value":      `{"event_name":"sum","value":6,"external_customer_id":"u1","idempotency_key":"k","properties":{"a":1e2,"b":[1,"x"]}}`,
		"timestamp":  `{"event_name":"sum","value":5,"external_customer_id":"u1","timestamp":"` + other + `","idempotency_key":"k","properties":{"a":1e2,"b":[1,"x"]}}`,
		"properties": `{"event_name":"sum","value":5,"external_customer_id":"u1","idempotency_key":"k","properties":{"a":1e2,"b":[1,"y"]}}`,
	} {
		status, _, got := b.raw("POST", "/v1/meter-events", key, body)
		if code, msg := errorBody(t, got); status != 400 || code != "invalid_request" || !strings.HasPrefix(msg, "idempotency_key: ") || !strings.Contains(msg, field) {
			t.Errorf("%s: %d %s", field, status, got)
		}
		// In a batch: that item alone, beside a new event and a repeat of
		// the new one's own key.
		batch := `{"events":[` + body + `,{"event_name":"sum","value":1,"external_customer_id":"u3","idempotency_key":"n-` + field + `"},` +
			`{"event_name":"sum","value":2,"external_customer_id":"u3","idempotency_key":"n-` + field + `"}]}`
		status, _, got = b.raw("POST", "/v1/meter-events", key, batch)
		var res struct {
			Accepted, Rejected int
			Data               []json.RawMessage
		}
		if status != 200 || json.Unmarshal([]byte(got), &res) != nil || res.Accepted != 1 || res.Rejected != 2 ||
			!strings.Contains(string(res.Data[0]), `"message":"idempotency_key: `) || !strings.Contains(string(res.Data[2]), `"message":"idempotency_key: `) {
			t.Errorf("batch %s: %d %s", field, status, got)
		}
	}
	var total int64
	if err := b.db.Get(&total, `SELECT sum(value) FROM meter_events WHERE idempotency_key = 'k'`); err != nil || total != 5 {
		t.Fatalf("usage under k: %d %v", total, err)
	}
}

package metering

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The Idempotency-Key header's rules: a single event takes it, or must
// agree with it; a batch refuses it.
func TestApplyIdempotencyKey(t *testing.T) {
	t.Parallel()
	k := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, body, header string
		want               *string
		err                string
	}{
		{"no header", `{"event_name":"a","idempotency_key":"b"}`, "", k("b"), ""},
		{"header only", `{"event_name":"a"}`, "h", k("h"), ""},
		{"both agree", `{"event_name":"a","idempotency_key":"h"}`, "h", k("h"), ""},
		{"both differ", `{"event_name":"a","idempotency_key":"b"}`, "h", nil, "idempotency_key: differs from the Idempotency-Key header; send one or the other"},
		{"neither", `{"event_name":"a"}`, "", nil, ""},
		{"batch", `{"events":[{"event_name":"a"}]}`, "h", nil, "Idempotency-Key: applies to a single event; give each event of a batch its own idempotency_key"},
		{"batch without header", `{"events":[{"event_name":"a","idempotency_key":"b"}]}`, "", k("b"), ""},
	} {
		req, err := DecodeRequest([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		err = req.ApplyIdempotencyKey(tc.header)
		if tc.err != "" {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || e.Message != tc.err {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		got := req.Events[0].IdempotencyKey
		if err != nil || (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: key %v, err %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// A batch's answer: per item, in order, the event's wire form or the error
// object with its index; counts of each.
func TestOutcomeWire(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	cus := "cus_1"
	ev := Event{Mode: tenant.Test, ID: "me_1", MeterKey: "api", CustomerID: &cus, Value: 3, Timestamp: at, CreatedAt: at}
	out := Outcome{Batch: true, Results: []Result{
		{Event: ev},
		{Err: apperr.New(apperr.UnknownMeter, "event_name: no meter with key %q", "x")},
		{Err: errors.New("a database failure")},
	}}
	raw, err := json.Marshal(out.Wire())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":"list","accepted":1,"rejected":2,"data":[` +
		`{"object":"meter_event","id":"me_1","meter":"api","customer_id":"cus_1","value":"3","event_timestamp":"2026-07-01T12:00:00.000000Z","idempotency_key":null,"created_at":"2026-07-01T12:00:00.000000Z","livemode":false,"deduplicated":false},` +
		`{"object":"error","index":1,"error":{"code":"unknown_meter","message":"event_name: no meter with key \"x\""}},` +
		`{"object":"error","index":2,"error":{"code":"internal_error","message":"internal error"}}]}`
	if string(raw) != want {
		t.Fatalf("batch wire\n got %s\nwant %s", raw, want)
	}
	single := Outcome{Results: []Result{{Err: apperr.New(apperr.MissingValue, "value: x")}}}
	if _, err := single.Event(); apperr.CodeOf(err) != apperr.MissingValue {
		t.Fatalf("single event's error: %v", err)
	}
	single = Outcome{Results: []Result{{Event: ev}}}
	if got, err := single.Event(); err != nil || got.ID != "me_1" {
		t.Fatalf("single event: %v %v", got, err)
	}
}

package metering

import (
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// DecodeEvent reads one event of POST /v1/meter-events from a JSON object
// (a REST body, a batch item or tool arguments); errors are invalid_request
// naming the field.
func DecodeEvent(o *fields.Object) (EventInput, error) {
	in := EventInput{
		EventName:          o.RequiredString("event_name", 0, 0),
		CustomerID:         o.String("customer_id", 0, 0),
		ExternalCustomerID: o.String("external_customer_id", 0, 0),
		Timestamp:          o.Time("timestamp"),
		IdempotencyKey:     o.String("idempotency_key", 0, 0),
		Properties:         o.Raw("properties"),
	}
	if raw := o.Raw("value"); raw != nil {
		v, err := ParseValue("value", raw)
		if err != nil {
			o.Fail(err)
		}
		in.Value = &v
	}
	return in, o.Err()
}

// Wire returns the event's public form.
func (e Event) Wire() wire.MeterEvent { return e.wire(&stampMemo{}, &stampMemo{}) }

// wire is Wire, formatting the timestamps through memos: the events of a
// batch mostly share their created_at and often their timestamp.
func (e Event) wire(ts, created *stampMemo) wire.MeterEvent {
	return wire.MeterEvent{
		Object: "meter_event", ID: e.ID, Meter: e.MeterKey, CustomerID: e.CustomerID, Value: strconv.FormatInt(e.Value, 10),
		EventTimestamp: ts.format(e.Timestamp), IdempotencyKey: e.IdempotencyKey, Properties: e.Properties,
		CreatedAt: created.format(e.CreatedAt), Livemode: e.Mode == tenant.Live, Deduplicated: e.Deduplicated,
		CancelledAt: wire.OptTimestamp(e.CancelledAt),
	}
}

// stampMemo formats a time as wire.Timestamp does, remembering the last
// one.
type stampMemo struct {
	t time.Time
	s string
}

func (m *stampMemo) format(t time.Time) string {
	if m.s == "" || !t.Equal(m.t) {
		m.t, m.s = t, wire.Timestamp(t)
	}
	return m.s
}

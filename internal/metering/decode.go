package metering

import (
	"strconv"

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

// Request is a decoded POST /v1/meter-events body: one event, or a batch
// whose items failed to decode are rejected one by one (Errs[i] set) while
// the others go on.
type Request struct {
	Batch  bool
	Events []EventInput
	Errs   []error
}

// DecodeRequest parses a meter-events body: one event, or {"events":[…]}
// with 1 to MaxBatch events. A body that is not JSON is invalid_json; a
// malformed envelope (or, for one event, a bad field) is the error.
func DecodeRequest(body []byte) (Request, error) {
	o, err := fields.Decode(body)
	if err != nil {
		return Request{}, err
	}
	if !o.Has("events") {
		in, err := DecodeEvent(o)
		if err != nil {
			return Request{}, err
		}
		return Request{Events: []EventInput{in}, Errs: []error{nil}}, nil
	}
	items, errs, ok := o.Objects("events", 1, MaxBatch)
	if err := o.Err(); err != nil || !ok {
		return Request{Batch: true}, err
	}
	req := Request{Batch: true, Events: make([]EventInput, len(items)), Errs: errs}
	for i, item := range items {
		if item != nil {
			req.Events[i], req.Errs[i] = DecodeEvent(item)
		}
	}
	return req, nil
}

// Wire returns the event's public form.
func (e Event) Wire() wire.MeterEvent {
	return wire.MeterEvent{
		Object: "meter_event", ID: e.ID, Meter: e.MeterKey, CustomerID: e.CustomerID, Value: strconv.FormatInt(e.Value, 10),
		EventTimestamp: wire.Timestamp(e.Timestamp), IdempotencyKey: e.IdempotencyKey, Properties: e.Properties,
		CreatedAt: wire.Timestamp(e.CreatedAt), Livemode: e.Mode == tenant.Live, Deduplicated: e.Deduplicated,
	}
}

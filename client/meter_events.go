package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// MeterEvent is a stored usage event.
type MeterEvent struct {
	Object         string          `json:"object"` // "meter_event"
	ID             string          `json:"id"`     // me_…
	Meter          string          `json:"meter"`  // the event name (meter key)
	CustomerID     *string         `json:"customer_id"`
	Value          string          `json:"value"`
	EventTimestamp time.Time       `json:"event_timestamp"`
	IdempotencyKey *string         `json:"idempotency_key"`
	Properties     json.RawMessage `json:"properties"`
	CreatedAt      time.Time       `json:"created_at"`
	Livemode       bool            `json:"livemode"`
	// Deduplicated is true when the idempotency key had been used before:
	// this is the original event, and nothing new was counted.
	Deduplicated bool `json:"deduplicated"`
	// CancelledAt is set once the event was cancelled: it counts nowhere.
	CancelledAt *time.Time `json:"cancelled_at,omitempty"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *MeterEvent) setRaw(b json.RawMessage) { v.Raw = b }

// MeterEventParams is one usage event. Empty optional fields are not sent.
type MeterEventParams struct {
	EventName string `json:"event_name"` // required: a meter's key
	// Value is a non-negative integer; empty lets the meter decide (its
	// event_value_key property, or 1 for a count meter).
	Value              string          `json:"value,omitempty"`
	CustomerID         string          `json:"customer_id,omitempty"`
	ExternalCustomerID string          `json:"external_customer_id,omitempty"` // upserted
	Timestamp          *time.Time      `json:"timestamp,omitempty"`            // default now
	IdempotencyKey     string          `json:"idempotency_key,omitempty"`      // up to 255 characters
	Properties         json.RawMessage `json:"properties,omitempty"`           // a JSON object
}

// SendMeterEvent records one usage event (POST /v1/meter-events). With an
// idempotency key (in p or as the IdempotencyKey call option) a replay
// returns the original event with Deduplicated set, and the call is retried
// safely. It fails with an *Error of code unknown_meter (404),
// missing_value, unknown_customer, invalid_request or mode_mismatch.
func (c *Client) SendMeterEvent(ctx context.Context, p MeterEventParams, opts ...CallOption) (*MeterEvent, error) {
	return create[MeterEvent](ctx, c, "/v1/meter-events", p, p.IdempotencyKey != "", opts)
}

// MeterEventBatch is the result of a batch: one entry per event, in request
// order.
type MeterEventBatch struct {
	Object   string              `json:"object"` // "list"
	Accepted int                 `json:"accepted"`
	Rejected int                 `json:"rejected"`
	Data     []MeterEventOutcome `json:"-"`
	// Raw is the response exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// MeterEventOutcome is one event's result in a batch: Event when it was
// accepted (possibly Deduplicated), else Error.
type MeterEventOutcome struct {
	Event *MeterEvent
	Error *BatchError
}

// BatchError is a rejected event of a batch.
type BatchError struct {
	Index   int    // position in the request
	Code    string // e.g. "unknown_meter"
	Message string
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("event %d: %s: %s", e.Index, e.Code, e.Message)
}

// SendMeterEvents records 1 to 500 events in one request. A rejected event
// does not stop the others; see each outcome. The call is retried after
// connection errors and 503s only when every event carries an idempotency
// key. It fails with an *Error when the request as a whole is refused.
func (c *Client) SendMeterEvents(ctx context.Context, events []MeterEventParams, opts ...CallOption) (*MeterEventBatch, error) {
	raw := make([]json.RawMessage, len(events))
	keyed := true
	for i, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("client: encoding event %d: %w", i, err)
		}
		raw[i] = b
		keyed = keyed && e.IdempotencyKey != ""
	}
	return c.sendBatch(ctx, raw, keyed, opts)
}

// SendMeterEventsRaw is SendMeterEvents for events already encoded as JSON
// objects (e.g. lines of a file), sent as they are. keyed declares that
// every event carries an idempotency_key, which makes retries safe.
func (c *Client) SendMeterEventsRaw(ctx context.Context, events []json.RawMessage, keyed bool, opts ...CallOption) (*MeterEventBatch, error) {
	return c.sendBatch(ctx, events, keyed, opts)
}

func (c *Client) sendBatch(ctx context.Context, events []json.RawMessage, keyed bool, opts []CallOption) (*MeterEventBatch, error) {
	r, err := newRequest("POST", "/v1/meter-events", map[string]any{"events": events}, keyed, opts)
	if err != nil {
		return nil, err
	}
	b, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var env struct {
		Object   string            `json:"object"`
		Accepted int               `json:"accepted"`
		Rejected int               `json:"rejected"`
		Data     []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("client: decoding batch result: %w", err)
	}
	out := &MeterEventBatch{Object: env.Object, Accepted: env.Accepted, Rejected: env.Rejected, Raw: b,
		Data: make([]MeterEventOutcome, len(env.Data))}
	for i, item := range env.Data {
		// One pass per item: an accepted event's fields and a rejected
		// one's index and error land in the same struct.
		var v struct {
			MeterEvent
			Index int `json:"index"`
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(item, &v); err != nil {
			return nil, fmt.Errorf("client: decoding batch item %d: %w", i, err)
		}
		if v.Object == "error" && v.Error != nil {
			out.Data[i].Error = &BatchError{Index: v.Index, Code: v.Error.Code, Message: v.Error.Message}
			continue
		}
		ev := v.MeterEvent
		ev.Raw = item
		out.Data[i].Event = &ev
	}
	return out, nil
}

func (p MeterEventParams) bodyIdempotencyKey() string { return p.IdempotencyKey }

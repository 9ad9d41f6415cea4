package client

import (
	"context"
	"encoding/json"
	"time"
)

// Meter is the named thing usage events are recorded against.
type Meter struct {
	Object        string    `json:"object"` // "meter"
	ID            string    `json:"id"`     // meter_…
	Key           string    `json:"key"`    // the event_name usage is sent with
	DisplayName   string    `json:"display_name"`
	Aggregation   string    `json:"aggregation"` // sum, count, max or last
	EventValueKey *string   `json:"event_value_key"`
	UnitLabel     string    `json:"unit_label"`
	Description   *string   `json:"description"`
	CreatedAt     time.Time `json:"created_at"`
	Livemode      bool      `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Meter) setRaw(b json.RawMessage) { v.Raw = b }

// Meter aggregations.
const (
	AggregationSum   = "sum"
	AggregationCount = "count"
	AggregationMax   = "max"
	AggregationLast  = "last"
)

// MeterParams is the body of POST /v1/meters. Empty optional fields are not
// sent.
type MeterParams struct {
	Key           string `json:"key"`          // required: letters, digits, dot, dash, underscore
	DisplayName   string `json:"display_name"` // required
	Aggregation   string `json:"aggregation,omitempty"`
	EventValueKey string `json:"event_value_key,omitempty"`
	UnitLabel     string `json:"unit_label,omitempty"`
	Description   string `json:"description,omitempty"`
}

// CreateMeter creates a meter (POST /v1/meters). The API is idempotent by
// key: a repeat returns the existing meter unchanged with status 200 (see
// CaptureResponse), which also makes the call safe to retry. It fails with
// an *Error of code invalid_request or mode_mismatch.
func (c *Client) CreateMeter(ctx context.Context, p MeterParams, opts ...CallOption) (*Meter, error) {
	return create[Meter](ctx, c, "/v1/meters", p, true, opts)
}

// ListMeters returns one page of meters, newest first (GET /v1/meters).
func (c *Client) ListMeters(ctx context.Context, p ListParams, opts ...CallOption) (*List[Meter], error) {
	return list[Meter](ctx, c, "/v1/meters", p, opts)
}

package client

import (
	"context"
	"encoding/json"
	"time"
)

// Feature is something customers can be entitled to: boolean (on or off) or
// metered (usage of a meter counts against a granted limit).
type Feature struct {
	Object      string    `json:"object"` // "feature"
	ID          string    `json:"id"`     // feat_…
	Key         string    `json:"key"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`     // "boolean" or "metered"
	MeterID     *string   `json:"meter_id"` // the backing meter of a metered feature
	UnitLabel   *string   `json:"unit_label"`
	Description *string   `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	Livemode    bool      `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Feature) setRaw(b json.RawMessage) { v.Raw = b }

// Feature types.
const (
	FeatureBoolean = "boolean"
	FeatureMetered = "metered"
)

// FeatureParams is the body of POST /v1/features. Empty optional fields are
// not sent.
type FeatureParams struct {
	Key         string `json:"key"`  // required: letters, digits, dot, dash, underscore
	Name        string `json:"name"` // required
	Type        string `json:"type,omitempty"`
	Meter       string `json:"meter,omitempty"` // meter id; required for metered
	UnitLabel   string `json:"unit_label,omitempty"`
	Description string `json:"description,omitempty"`
}

// CreateFeature creates a feature (POST /v1/features). The API is idempotent
// by key: a repeat returns the existing feature unchanged, which also makes
// the call safe to retry. It fails with an *Error of code invalid_request
// (naming the field, e.g. a metered feature's meter that does not exist) or
// mode_mismatch.
func (c *Client) CreateFeature(ctx context.Context, p FeatureParams, opts ...CallOption) (*Feature, error) {
	return create[Feature](ctx, c, "/v1/features", p, true, opts)
}

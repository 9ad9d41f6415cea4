package metering

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Limits of meter event ingestion.
const (
	// MaxBatch is the most events one request may carry.
	MaxBatch = 500
	// MaxIdempotencyKeyLen bounds idempotency_key, in characters.
	MaxIdempotencyKeyLen = 255
	// MaxAge is how far in the past an event's timestamp may be; idempotency
	// keys are kept at least this long.
	MaxAge = 35 * 24 * time.Hour
	// MaxSkew is how far in the future an event's timestamp may be.
	MaxSkew = 5 * time.Minute
)

// EventInput is one usage event as a request sends it. Pointers are nil
// when the field was absent.
type EventInput struct {
	EventName          string
	Value              *int64
	CustomerID         *string
	ExternalCustomerID *string
	Timestamp          *time.Time
	IdempotencyKey     *string
	// Properties is a JSON object, or nil.
	Properties json.RawMessage
}

// Event is a stored meter event.
type Event struct {
	Mode           tenant.Mode
	ID             string
	MeterID        string
	MeterKey       string
	CustomerID     *string
	Value          int64
	Timestamp      time.Time
	Properties     json.RawMessage
	IdempotencyKey *string
	CreatedAt      time.Time
	// CancelledAt is set once the event was cancelled: it counts nowhere.
	CancelledAt *time.Time
	// Deduplicated is true when the request replayed an idempotency key:
	// the Event is the original one and nothing new was counted.
	Deduplicated bool
}

// Result is the outcome of one event of a request: Err is nil when the
// event was stored (or deduplicated), else an *apperr.Error.
type Result struct {
	Event Event
	Err   error
}

// Validate checks the rules that need no database: event_name, the
// idempotency key, properties, the customer reference's shape and the
// timestamp window around now (which it fills in when absent, truncated to
// the database's microseconds). Errors are invalid_request naming the field.
func (in *EventInput) Validate(now time.Time) error {
	if in.EventName == "" {
		return apperr.Field("event_name", "is required")
	}
	if len(in.EventName) > MaxKeyLen || !isKey(in.EventName) {
		// No meter can have such a key.
		return apperr.New(apperr.UnknownMeter, "event_name: no meter with key %q", in.EventName)
	}
	if k := in.IdempotencyKey; k != nil && (*k == "" || utf8.RuneCountInString(*k) > MaxIdempotencyKeyLen) {
		return apperr.Field("idempotency_key", "must be 1 to %d characters", MaxIdempotencyKeyLen)
	}
	if k := in.IdempotencyKey; k != nil && fields.TextProblem(*k) != "" {
		return apperr.Field("idempotency_key", "%s", fields.TextProblem(*k))
	}
	if c := in.CustomerID; c != nil && (*c == "" || len(*c) > 255) {
		return apperr.Field("customer_id", "must be a customer id (cus_…)")
	}
	if x := in.ExternalCustomerID; x != nil && (*x == "" || utf8.RuneCountInString(*x) > customers.MaxExternalIDLen) {
		return apperr.Field("external_customer_id", "must be 1 to %d characters", customers.MaxExternalIDLen)
	}
	if in.Properties != nil {
		p := bytes.TrimSpace(in.Properties)
		if len(p) == 0 || p[0] != '{' {
			return apperr.Field("properties", "must be a JSON object")
		}
	}
	if in.Timestamp == nil {
		t := now
		in.Timestamp = &t
	}
	switch t := *in.Timestamp; {
	case t.Before(now.Add(-MaxAge)):
		return apperr.Field("timestamp", "must be at most 35 days in the past")
	case t.After(now.Add(MaxSkew)):
		return apperr.Field("timestamp", "must be at most 5 minutes in the future")
	}
	t := in.Timestamp.Truncate(time.Microsecond)
	in.Timestamp = &t
	return nil
}

// ParseValue reads a quantity: a JSON integer or a string of digits, never
// negative, never a float. field names the input field in the error.
func ParseValue(field string, raw json.RawMessage) (int64, error) {
	a, err := money.ParseJSON(raw)
	if err != nil {
		if err == money.ErrOverflow {
			return 0, apperr.Field(field, "is too large")
		}
		return 0, apperr.Field(field, "must be a non-negative integer (a JSON integer or a string of digits)")
	}
	return int64(a), nil
}

// quantity applies the rule for an event's value on meter m: value
// if present; else properties[event_value_key] when the meter has one; else
// 1 for a count meter; else missing_value.
func quantity(in EventInput, m Meter) (int64, error) {
	if in.Value != nil {
		return *in.Value, nil
	}
	if m.EventValueKey != nil && in.Properties != nil {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(in.Properties, &props); err != nil {
			return 0, apperr.Field("properties", "must be a JSON object")
		}
		if raw, ok := props[*m.EventValueKey]; ok && string(raw) != "null" {
			return ParseValue("properties."+*m.EventValueKey, raw)
		}
	}
	if m.Aggregation == Count {
		return 1, nil
	}
	if m.EventValueKey != nil {
		return 0, apperr.New(apperr.MissingValue, "value: meter %s aggregates with %s; send value or properties.%s", m.Key, m.Aggregation, *m.EventValueKey)
	}
	return 0, apperr.New(apperr.MissingValue, "value: meter %s aggregates with %s, so every event needs a value", m.Key, m.Aggregation)
}

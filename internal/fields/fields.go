// Package fields decodes a JSON request object strictly and field by field,
// so every error names its field: unknown fields, wrong types, out-of-range
// values. REST handlers and MCP tools share it, so both reject the same input
// the same way.
package fields

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
)

// Object is a decoded JSON object whose values are still raw.
type Object struct {
	raw  map[string]json.RawMessage
	err  error
	seen map[string]bool
}

// Decode parses body as one JSON object. Not JSON at all is invalid_json;
// JSON that is not an object is invalid_request.
func Decode(body []byte) (*Object, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || !json.Valid(body) {
		return nil, apperr.New(apperr.InvalidJSON, "request body is not valid JSON")
	}
	if body[0] != '{' {
		return nil, apperr.New(apperr.InvalidRequest, "request body must be a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, apperr.New(apperr.InvalidJSON, "request body is not valid JSON")
	}
	return &Object{raw: raw, seen: map[string]bool{}}, nil
}

// FromMap wraps already-split arguments (MCP tool arguments).
func FromMap(raw map[string]json.RawMessage) *Object {
	if raw == nil {
		raw = map[string]json.RawMessage{}
	}
	return &Object{raw: raw, seen: map[string]bool{}}
}

// Err returns the first error met, including unknown fields: call it after
// reading every field the schema admits.
func (o *Object) Err() error {
	if o.err != nil {
		return o.err
	}
	var unknown []string
	for k := range o.raw {
		if !o.seen[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return apperr.Field(unknown[0], "unknown field")
	}
	return nil
}

func (o *Object) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// get returns the raw value, nil when absent or JSON null.
func (o *Object) get(name string) json.RawMessage {
	o.seen[name] = true
	v, ok := o.raw[name]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

// Has reports whether name is present and not null.
func (o *Object) Has(name string) bool {
	v, ok := o.raw[name]
	return ok && string(v) != "null"
}

// String reads an optional string whose length in characters is within
// [min, max] (max 0: unbounded). Absent or null gives nil.
func (o *Object) String(name string, min, max int) *string {
	v := o.get(name)
	if v == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		o.fail(apperr.Field(name, "must be a string"))
		return nil
	}
	n := utf8.RuneCountInString(s)
	switch {
	case max > 0 && (n < min || n > max) && min > 0:
		o.fail(apperr.Field(name, "must be %d to %d characters", min, max))
	case max > 0 && n > max:
		o.fail(apperr.Field(name, "must be at most %d characters", max))
	case n < min:
		o.fail(apperr.Field(name, "must be at least %d characters", min))
	}
	return &s
}

// RequiredString is String that records "is required" when absent.
func (o *Object) RequiredString(name string, min, max int) string {
	s := o.String(name, min, max)
	if s == nil {
		if o.Has(name) || o.err == nil {
			o.fail(apperr.Field(name, "is required"))
		}
		return ""
	}
	return *s
}

// Amount reads an amount: a JSON integer or a string of digits. ok is false
// when absent.
func (o *Object) Amount(name string) (a money.Amount, ok bool) {
	v := o.get(name)
	if v == nil {
		return 0, false
	}
	a, err := money.ParseJSON(v)
	if err != nil {
		o.fail(apperr.Field(name, "%s", err.Error()))
		return 0, false
	}
	return a, true
}

// RequiredAmount is Amount that records "is required" when absent.
func (o *Object) RequiredAmount(name string) money.Amount {
	a, ok := o.Amount(name)
	if !ok && o.err == nil {
		o.fail(apperr.Field(name, "is required"))
	}
	return a
}

// Time reads an RFC 3339 date-time.
func (o *Object) Time(name string) *time.Time {
	v := o.get(name)
	if v == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		o.fail(apperr.Field(name, "must be an ISO-8601 date-time string"))
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		o.fail(apperr.Field(name, "must be an ISO-8601 date-time such as 2026-07-01T12:00:00Z"))
		return nil
	}
	return &t
}

// Bool reads an optional boolean.
func (o *Object) Bool(name string) *bool {
	v := o.get(name)
	if v == nil {
		return nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		o.fail(apperr.Field(name, "must be true or false"))
		return nil
	}
	return &b
}

// Int reads an optional JSON integer within [min, max].
func (o *Object) Int(name string, min, max int64) *int64 {
	v := o.get(name)
	if v == nil {
		return nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		o.fail(apperr.Field(name, "must be an integer"))
		return nil
	}
	if n < min || n > max {
		o.fail(apperr.Field(name, "must be from %d to %d", min, max))
		return nil
	}
	return &n
}

// Raw returns the raw JSON of an optional field (objects, arrays).
func (o *Object) Raw(name string) json.RawMessage { return o.get(name) }

// Fail records an error found by the caller (e.g. a cross-field rule).
func (o *Object) Fail(err error) { o.fail(err) }

// Read returns the names of the fields read so far, sorted: what a decoder
// admits, for tests that hold it to the documented request type.
func (o *Object) Read() []string {
	names := make([]string, 0, len(o.seen))
	for k := range o.seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

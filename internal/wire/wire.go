// Package wire holds the public JSON form of every object the API returns:
// one struct per object, used alike for REST responses, the data of events
// (and so webhook deliveries) and tool results, so the three can never
// disagree. Domain packages convert their types to these (a Wire method next
// to each type); nothing here knows about HTTP or SQL.
package wire

import (
	"encoding/json"
	"time"
)

// Timestamp formats t the one way every object's date-times appear: ISO-8601
// in UTC with microseconds, e.g. 2026-07-01T12:00:00.000000Z.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// OptTimestamp is Timestamp for an optional time; nil stays nil (null).
func OptTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Timestamp(*t)
	return &s
}

// List is the API's list envelope.
type List struct {
	Object     string  `json:"object"` // "list"
	Data       any     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// ErrorDetail is the inside of the error envelope.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// CheckoutURL is where the payer authorizes a larger amount
	// (authorization_required only).
	CheckoutURL string `json:"checkout_url,omitempty"`
}

// Error is the error envelope: {"error":{"code":…,"message":…}}.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// Event is an entry of the event feed, as GET /v1/events lists it and as a
// webhook delivery carries it. CreatedAt is when the change happened by the
// merchant's clock (a test clock may run ahead); the feed's order is
// separate and never shown.
type Event struct {
	Object    string          `json:"object"` // "event"
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
	Livemode  bool            `json:"livemode"`
}

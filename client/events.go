package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// EventsAfterParams select the events after a position in the feed.
type EventsAfterParams struct {
	// After is an event id (evt_…) or a date-time (RFC 3339, microseconds
	// at most): the events strictly after that event, or at or after that
	// instant, are returned.
	After string
	// Limit is the page size, 1 to 100; 0 means the API's default (25).
	Limit int
}

// ListEventsAfter returns the events after p.After, oldest first
// (GET /v1/events?after=…): the way to follow the feed. Events appear once
// every transaction that could still commit an earlier one has ended, so
// passing the last event's id as the next After never skips an event. When
// HasMore is true, NextCursor is the After of the next page. An unknown
// event id fails with an *Error of code invalid_request.
func (c *Client) ListEventsAfter(ctx context.Context, p EventsAfterParams, opts ...CallOption) (*List[Event], error) {
	r, err := newRequest(http.MethodGet, "/v1/events", nil, true, opts)
	if err != nil {
		return nil, err
	}
	r.query = url.Values{"after": {p.After}}
	if p.Limit != 0 {
		r.query.Set("limit", strconv.Itoa(p.Limit))
	}
	b, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return decodeList[Event](b)
}

// EventTypes returns every event type the API emits, in a fixed order.
func EventTypes() []string {
	return []string{
		"invoice.paid", "refund.succeeded", "subscription.active", "subscription.renewed", "subscription.payment_failed",
		"subscription.dunning_exhausted", "subscription.revoked", "subscription.expired", "credit.granted", "credit.debited",
		"entitlement.granted", "meter_event.cancelled", "alert.triggered",
	}
}

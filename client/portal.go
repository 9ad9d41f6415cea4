package client

import (
	"context"
	"encoding/json"
	"time"
)

// PortalSession is a link to the customer portal for one customer, good
// for an hour. URL carries the session's secret: give it to that customer
// only. It is in this answer only.
type PortalSession struct {
	Object     string    `json:"object"` // "portal_session"
	ID         string    `json:"id"`     // ps_…
	CustomerID string    `json:"customer_id"`
	URL        string    `json:"url"`
	ReturnURL  *string   `json:"return_url"`
	ExpiresAt  time.Time `json:"expires_at"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *PortalSession) setRaw(b json.RawMessage) { v.Raw = b }

// PortalSessionParams is the body of POST /v1/portal_sessions: the
// customer by CustomerID or ExternalCustomerID (which must exist), where
// the portal's back link leads, and the plans the customer may switch to.
type PortalSessionParams struct {
	CustomerID         string   `json:"customer_id,omitempty"`
	ExternalCustomerID string   `json:"external_customer_id,omitempty"`
	ReturnURL          string   `json:"return_url,omitempty"`
	Plans              []string `json:"plans,omitempty"`
}

// CreatePortalSession makes a customer portal link (POST
// /v1/portal_sessions). It fails with an *Error of code invalid_request,
// unknown_customer, customer_required or mode_mismatch.
func (c *Client) CreatePortalSession(ctx context.Context, p PortalSessionParams, opts ...CallOption) (*PortalSession, error) {
	return create[PortalSession](ctx, c, "/v1/portal_sessions", p, false, opts)
}

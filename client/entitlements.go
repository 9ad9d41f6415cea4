package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// EntitlementGrant is the result of granting a feature to a customer.
type EntitlementGrant struct {
	Object      string     `json:"object"`  // "entitlement_grant"
	ID          string     `json:"id"`      // ent_…
	Feature     string     `json:"feature"` // the feature key
	CustomerID  string     `json:"customer_id"`
	LimitValue  *string    `json:"limit_value"` // usage limit of a metered feature; nil: unlimited
	StartsAt    time.Time  `json:"starts_at"`
	ActiveUntil *time.Time `json:"active_until"`
	CreatedAt   time.Time  `json:"created_at"`
	Livemode    bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *EntitlementGrant) setRaw(b json.RawMessage) { v.Raw = b }

// EntitlementGrantParams is the body of POST /v1/entitlement_grants. Give
// CustomerID or ExternalCustomerID (upserted). Empty optional fields are not
// sent.
type EntitlementGrantParams struct {
	FeatureKey         string     `json:"feature_key"`
	CustomerID         string     `json:"customer_id,omitempty"`
	ExternalCustomerID string     `json:"external_customer_id,omitempty"`
	LimitValue         string     `json:"limit_value,omitempty"` // non-negative integer, metered features only
	ActiveUntil        *time.Time `json:"active_until,omitempty"`
}

// GrantEntitlement grants a feature to a customer (POST
// /v1/entitlement_grants), replacing the customer's previous limit and
// active_until for the feature. It fails with an *Error of code
// unknown_feature (404), customer_required, unknown_customer (400),
// invalid_request or mode_mismatch.
func (c *Client) GrantEntitlement(ctx context.Context, p EntitlementGrantParams, opts ...CallOption) (*EntitlementGrant, error) {
	return create[EntitlementGrant](ctx, c, "/v1/entitlement_grants", p, false, opts)
}

// Entitlement is the answer to an access check.
type Entitlement struct {
	Object     string `json:"object"` // "entitlement"
	CustomerID string `json:"customer_id"`
	Feature    string `json:"feature"`
	Entitled   bool   `json:"entitled"`
	// Reason is one of the Reason constants.
	Reason string `json:"reason"`
	// Limit, Used and Remaining are nil for boolean features; Limit and
	// Remaining are nil for a metered grant without a limit.
	Limit     *string `json:"limit"`
	Used      *string `json:"used"`
	Remaining *string `json:"remaining"`
	Livemode  bool    `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Entitlement) setRaw(b json.RawMessage) { v.Raw = b }

// Entitlement check reasons.
const (
	ReasonActive        = "active"
	ReasonGrace         = "grace"
	ReasonNoGrant       = "no_grant"
	ReasonNotStarted    = "not_started"
	ReasonRevoked       = "revoked"
	ReasonExpired       = "expired"
	ReasonLimitExceeded = "limit_exceeded"
)

// CheckEntitlement asks whether the customer may use the feature now (GET
// /v1/customers/{id}/entitlements/{feature_key}). Not being entitled is an
// answer, not an error. It fails with an *Error of code unknown_customer or
// unknown_feature (both 404).
func (c *Client) CheckEntitlement(ctx context.Context, customerID, featureKey string, opts ...CallOption) (*Entitlement, error) {
	r, err := newRequest(http.MethodGet, "/v1/customers/"+url.PathEscape(customerID)+"/entitlements/"+url.PathEscape(featureKey), nil, true, opts)
	if err != nil {
		return nil, err
	}
	return call[Entitlement](ctx, c, r)
}

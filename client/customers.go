package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Customer is a merchant's customer.
type Customer struct {
	Object             string    `json:"object"` // "customer"
	ID                 string    `json:"id"`     // cus_…
	ExternalCustomerID *string   `json:"external_customer_id"`
	CreatedAt          time.Time `json:"created_at"`
	Livemode           bool      `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Customer) setRaw(b json.RawMessage) { v.Raw = b }

// GetCustomer returns the customer idOrExternal names: a cus_… id, or else
// the merchant's own external_customer_id (GET /v1/customers/{id}). Looking
// a customer up never creates one. It fails with an *Error of code
// unknown_customer (404).
func (c *Client) GetCustomer(ctx context.Context, idOrExternal string, opts ...CallOption) (*Customer, error) {
	r, err := newRequest(http.MethodGet, "/v1/customers/"+url.PathEscape(idOrExternal), nil, true, opts)
	if err != nil {
		return nil, err
	}
	return call[Customer](ctx, c, r)
}

package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// CreditGrant is the result of a credit grant.
type CreditGrant struct {
	Object     string `json:"object"` // "credit_grant"
	CustomerID string `json:"customer_id"`
	Granted    string `json:"granted"` // base units
	Balance    string `json:"balance"` // base units, right after the grant
	EntryID    string `json:"entry_id"`
	// Deduplicated is true when the idempotency key was seen before: this is
	// the original result and nothing was granted again.
	Deduplicated bool `json:"deduplicated"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *CreditGrant) setRaw(b json.RawMessage) { v.Raw = b }

// CreditGrantParams is the body of POST /v1/credit_grants. Give CustomerID
// or ExternalCustomerID (upserted into a customer). Empty optional fields are
// not sent.
type CreditGrantParams struct {
	Amount             string     `json:"amount"` // required: positive base units
	CustomerID         string     `json:"customer_id,omitempty"`
	ExternalCustomerID string     `json:"external_customer_id,omitempty"`
	Reason             string     `json:"reason,omitempty"`     // up to 300 characters; default "API grant"
	ExpiresAt          *time.Time `json:"expires_at,omitempty"` // when the granted credits expire
	// IdempotencyKey (up to 255 characters) makes a repeat return the
	// original result instead of granting again; it also makes the call
	// safe to retry. The IdempotencyKey call option sends it as a header
	// instead.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// GrantCredits tops up a customer's prepaid balance (POST
// /v1/credit_grants). A replay of an idempotency key returns status 200 and
// Deduplicated (see CaptureResponse). It fails with an *Error of code
// customer_required, unknown_customer, invalid_request (naming the field, or
// a key reused with other parameters) or mode_mismatch.
func (c *Client) GrantCredits(ctx context.Context, p CreditGrantParams, opts ...CallOption) (*CreditGrant, error) {
	return create[CreditGrant](ctx, c, "/v1/credit_grants", p, p.IdempotencyKey != "", opts)
}

// CreditDebit is the result of a credit debit.
type CreditDebit struct {
	Object     string `json:"object"` // "credit_debit"
	CustomerID string `json:"customer_id"`
	Requested  string `json:"requested"` // base units
	Covered    string `json:"covered"`   // what the balance covered
	Shortfall  string `json:"shortfall"` // requested - covered; "0" with AllowNegative
	Balance    string `json:"balance"`   // right after the debit; negative only with AllowNegative
	// Deduplicated is true when the idempotency key was seen before.
	Deduplicated bool `json:"deduplicated"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *CreditDebit) setRaw(b json.RawMessage) { v.Raw = b }

// CreditDebitParams is the body of POST /v1/credit_debits.
type CreditDebitParams struct {
	Amount             string `json:"amount"` // required: positive base units
	CustomerID         string `json:"customer_id,omitempty"`
	ExternalCustomerID string `json:"external_customer_id,omitempty"`
	Reason             string `json:"reason,omitempty"` // up to 300 characters; default "API debit"
	// AllowNegative lets the balance go below zero to cover the whole
	// amount; without it the uncovered part is returned as Shortfall.
	AllowNegative  bool   `json:"allow_negative,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// DebitCredits draws down a customer's prepaid credits (POST
// /v1/credit_debits). It fails with an *Error of code customer_required,
// unknown_customer, no_credit_account (never granted credits),
// invalid_request or mode_mismatch.
func (c *Client) DebitCredits(ctx context.Context, p CreditDebitParams, opts ...CallOption) (*CreditDebit, error) {
	return create[CreditDebit](ctx, c, "/v1/credit_debits", p, p.IdempotencyKey != "", opts)
}

// CreditBalance is a customer's prepaid balance: Balance = Granted -
// Consumed - Expired. AccountID, Granted, Consumed and Expired are empty
// when the customer was never granted credits.
type CreditBalance struct {
	Object     string `json:"object"` // "credit_balance"
	CustomerID string `json:"customer_id"`
	AccountID  string `json:"account_id"`
	Balance    string `json:"balance"`  // base units; may be negative
	Granted    string `json:"granted"`  // lifetime
	Consumed   string `json:"consumed"` // lifetime debits (expired credits are not consumed)
	Expired    string `json:"expired"`  // lifetime: what grants lost by expiring unused
	Currency   string `json:"currency"` // "usdc"
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *CreditBalance) setRaw(b json.RawMessage) { v.Raw = b }

// GetCreditBalance returns the balance of the customer with customerID (GET
// /v1/customers/{id}/credit_balance). It fails with an *Error of code
// unknown_customer (404).
func (c *Client) GetCreditBalance(ctx context.Context, customerID string, opts ...CallOption) (*CreditBalance, error) {
	r, err := newRequest(http.MethodGet, "/v1/customers/"+url.PathEscape(customerID)+"/credit_balance", nil, true, opts)
	if err != nil {
		return nil, err
	}
	return call[CreditBalance](ctx, c, r)
}

func (p CreditGrantParams) bodyIdempotencyKey() string { return p.IdempotencyKey }
func (p CreditDebitParams) bodyIdempotencyKey() string { return p.IdempotencyKey }

package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// Invoice is a one-time invoice, paid in USDC at CheckoutURL.
type Invoice struct {
	Object        string     `json:"object"` // "invoice"
	ID            string     `json:"id"`     // inv_…
	Amount        string     `json:"amount"` // base units, e.g. "9000000" for 9.00 USDC
	Status        string     `json:"status"` // open on creation, then paid or void
	CheckoutURL   string     `json:"checkout_url"`
	Description   string     `json:"description"`
	Memo          *string    `json:"memo"`
	InvoiceNumber *string    `json:"invoice_number"`
	Recipient     *string    `json:"recipient"`
	DueAt         *time.Time `json:"due_at"`
	PaidAt        *time.Time `json:"paid_at,omitempty"`
	PaymentID     *string    `json:"payment_id,omitempty"`
	VoidedAt      *time.Time `json:"voided_at,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	Livemode      bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Invoice) setRaw(b json.RawMessage) { v.Raw = b }

// InvoiceParams is the body of POST /v1/invoices. Empty optional fields are
// not sent.
type InvoiceParams struct {
	Amount        string     `json:"amount"`      // required: positive base units
	Description   string     `json:"description"` // required: 1 to 500 characters
	Memo          string     `json:"memo,omitempty"`
	InvoiceNumber string     `json:"invoice_number,omitempty"`
	Recipient     string     `json:"recipient,omitempty"`
	DueAt         *time.Time `json:"due_at,omitempty"`
}

// CreateInvoice creates an invoice (POST /v1/invoices). It fails with an
// *Error of code invalid_request (naming the field) or mode_mismatch.
func (c *Client) CreateInvoice(ctx context.Context, p InvoiceParams, opts ...CallOption) (*Invoice, error) {
	return create[Invoice](ctx, c, "/v1/invoices", p, false, opts)
}

// ListInvoices returns one page of invoices, newest first (GET /v1/invoices).
func (c *Client) ListInvoices(ctx context.Context, p ListParams, opts ...CallOption) (*List[Invoice], error) {
	return list[Invoice](ctx, c, "/v1/invoices", p, opts)
}

// GetInvoice returns an invoice (GET /v1/invoices/{id}); an unknown id is
// an *Error of code resource_not_found.
func (c *Client) GetInvoice(ctx context.Context, id string, opts ...CallOption) (*Invoice, error) {
	return get[Invoice](ctx, c, "/v1/invoices/"+url.PathEscape(id), opts)
}

// VoidInvoice voids an open invoice (POST /v1/invoices/{id}/void) so it
// can no longer be paid. A paid invoice is an *Error of code
// invoice_not_open.
func (c *Client) VoidInvoice(ctx context.Context, id string, opts ...CallOption) (*Invoice, error) {
	return create[Invoice](ctx, c, "/v1/invoices/"+url.PathEscape(id)+"/void", nil, true, opts)
}

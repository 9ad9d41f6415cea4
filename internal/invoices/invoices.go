// Package invoices owns one-time invoices: creation with the spec's field
// rules, the request decoder, the wire form, and the newest-first list.
package invoices

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// StatusOpen is every invoice's status at creation.
const StatusOpen = "open"

// Invoice is a one-time payable amount.
type Invoice struct {
	MerchantID    string       `db:"merchant_id"`
	Mode          tenant.Mode  `db:"mode"`
	ID            string       `db:"id"`
	Seq           int64        `db:"seq"`
	Amount        money.Amount `db:"amount"`
	Description   string       `db:"description"`
	Memo          *string      `db:"memo"`
	InvoiceNumber *string      `db:"invoice_number"`
	Recipient     *string      `db:"recipient"`
	DueAt         *time.Time   `db:"due_at"`
	Status        string       `db:"status"`
	CreatedAt     time.Time    `db:"created_at"`
}

// Input is a create request.
type Input struct {
	Amount        money.Amount
	Description   string
	Memo          *string
	InvoiceNumber *string
	Recipient     *string
	DueAt         *time.Time
}

// Decode reads POST /v1/invoices' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		Amount:        o.RequiredAmount("amount"),
		Description:   o.RequiredString("description", 0, 0),
		Memo:          o.String("memo", 0, 0),
		InvoiceNumber: o.String("invoice_number", 0, 0),
		Recipient:     o.String("recipient", 0, 0),
		DueAt:         o.Time("due_at"),
	}
	return in, o.Err()
}

// Validate applies SPEC.md's rules; errors are invalid_request naming the
// field. Lengths count characters, not bytes.
func (in Input) Validate() error {
	if in.Amount <= 0 {
		return apperr.Field("amount", "must be a positive integer of base units")
	}
	if n := utf8.RuneCountInString(in.Description); n < 1 || n > 500 {
		return apperr.Field("description", "must be 1 to 500 characters")
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"memo", in.Memo, 200}, {"invoice_number", in.InvoiceNumber, 100}, {"recipient", in.Recipient, 200}} {
		if f.v != nil && utf8.RuneCountInString(*f.v) > f.max {
			return apperr.Field(f.name, "must be at most %d characters", f.max)
		}
	}
	return nil
}

const columns = `merchant_id, mode, id, seq, amount, description, memo, invoice_number, recipient, due_at, status, created_at`

// Create validates in and stores a new open invoice created at now, in one
// statement (on the pool or the caller's transaction). Fails with
// invalid_request.
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time) (Invoice, error) {
	if err := in.Validate(); err != nil {
		return Invoice{}, err
	}
	var inv Invoice
	err := q.GetContext(ctx, &inv, `INSERT INTO invoices (merchant_id, mode, id, amount, description, memo, invoice_number, recipient, due_at, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("inv"), in.Amount, in.Description, in.Memo, in.InvoiceNumber, in.Recipient, in.DueAt, StatusOpen, now)
	return inv, store.Translate(err)
}

// Wire returns the invoice's public form; baseURL prefixes its checkout link.
func (i Invoice) Wire(baseURL string) wire.Invoice {
	return wire.Invoice{
		Object: "invoice", ID: i.ID, Amount: i.Amount.String(), Status: i.Status,
		CheckoutURL: baseURL + "/checkout/" + i.ID, Description: i.Description,
		Memo: i.Memo, InvoiceNumber: i.InvoiceNumber, Recipient: i.Recipient,
		DueAt: wire.OptTimestamp(i.DueAt), CreatedAt: wire.Timestamp(i.CreatedAt), Livemode: i.Mode == tenant.Live,
	}
}

// Position is the invoice's place in the list, for cursors.
func (i Invoice) Position() page.Cursor { return page.Cursor{At: i.CreatedAt, Seq: i.Seq} }

// List returns a page of the scope's invoices, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Invoice], error) {
	return page.Select(ctx, q, "invoices", columns, s, p, Invoice.Position)
}

// Get returns the invoice with id in any merchant and mode, for the public
// checkout page (invoice ids are unguessable). Returns ok=false when absent.
func Get(ctx context.Context, q store.Querier, invoiceID string) (Invoice, bool, error) {
	var inv Invoice
	err := q.GetContext(ctx, &inv, `SELECT `+columns+` FROM invoices WHERE id = $1`, invoiceID)
	if store.NotFound(err) {
		return Invoice{}, false, nil
	}
	return inv, err == nil, store.Translate(err)
}

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

// Invoice statuses: open at creation, then paid or void.
const (
	StatusOpen = "open"
	StatusPaid = "paid"
	StatusVoid = "void"
)

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
	Payee         *string      `db:"payee"`
	PaidAt        *time.Time   `db:"paid_at"`
	PaymentID     *string      `db:"payment_id"`
	VoidedAt      *time.Time   `db:"voided_at"`
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

// Validate applies the API's rules; errors are invalid_request naming the
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

const columns = `merchant_id, mode, id, seq, amount, description, memo, invoice_number, recipient, due_at, status,
	payee, paid_at, payment_id, voided_at, created_at`

// Columns is the select list of an Invoice, for a statement of another
// package that reads or returns invoices with more in one round trip
// (checkout's pay path).
const Columns = columns

// Create validates in and stores a new open invoice created at now, in one
// statement (on the pool or the caller's transaction). Fails with
// invalid_request.
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time) (Invoice, error) {
	if err := in.Validate(); err != nil {
		return Invoice{}, err
	}
	return create(ctx, q, s, in, now, id.New("inv"))
}

// create stores a validated invoice with invoiceID.
func create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time, invoiceID string) (Invoice, error) {
	var inv Invoice
	// The merchant's settlement wallet is snapshotted on the invoice: it is
	// where this invoice's payment goes, whatever changes later.
	err := q.GetContext(ctx, &inv, `INSERT INTO invoices (merchant_id, mode, id, amount, description, memo, invoice_number, recipient, due_at, status, created_at, payee)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
			(SELECT address FROM settlement_wallets WHERE merchant_id = $1 AND mode = $2 AND replaced_at IS NULL)) RETURNING `+columns,
		s.MerchantID, s.Mode, invoiceID, in.Amount, in.Description, in.Memo, in.InvoiceNumber, in.Recipient, in.DueAt, StatusOpen, now)
	return inv, store.Translate(err)
}

// Wire returns the invoice's public form; baseURL prefixes its checkout link.
func (i Invoice) Wire(baseURL string) wire.Invoice {
	return wire.Invoice{
		Object: "invoice", ID: i.ID, Amount: i.Amount.String(), Status: i.Status,
		CheckoutURL: baseURL + "/checkout/" + i.ID, Description: i.Description,
		Memo: i.Memo, InvoiceNumber: i.InvoiceNumber, Recipient: i.Recipient,
		DueAt: wire.OptTimestamp(i.DueAt), PaidAt: wire.OptTimestamp(i.PaidAt), PaymentID: i.PaymentID,
		VoidedAt: wire.OptTimestamp(i.VoidedAt), CreatedAt: wire.Timestamp(i.CreatedAt), Livemode: i.Mode == tenant.Live,
	}
}

// Scope is the invoice's merchant and mode.
func (i Invoice) Scope() tenant.Scope { return tenant.Scope{MerchantID: i.MerchantID, Mode: i.Mode} }

// Position is the invoice's place in the list, for cursors.
func (i Invoice) Position() page.Cursor { return page.Cursor{At: i.CreatedAt, Seq: i.Seq} }

// List returns a page of the scope's invoices, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Invoice], error) {
	return page.Select(ctx, q, "invoices", columns, s, p, Invoice.Position)
}

// ByID returns the scope's invoice with id; an unknown id (taken from a URL
// path) is resource_not_found.
func ByID(ctx context.Context, q store.Querier, s tenant.Scope, invoiceID string) (Invoice, error) {
	var invs []Invoice
	err := q.SelectContext(ctx, &invs, `SELECT `+columns+` FROM invoices WHERE merchant_id = $1 AND mode = $2 AND id = $3`, s.MerchantID, s.Mode, invoiceID)
	if err != nil {
		return Invoice{}, store.Translate(err)
	}
	if len(invs) == 0 {
		return Invoice{}, apperr.New(apperr.ResourceNotFound, "no invoice %q", invoiceID)
	}
	return invs[0], nil
}

// Void marks the scope's open invoice void at now, so it can no longer be
// paid; voiding a void invoice again returns it unchanged. Fails with
// resource_not_found, or invoice_not_open when it is paid.
//
// The answer is the state the void left, never an older one: the update
// waits for a payment or another void of the invoice in flight and judges
// the row as that left it. (A read beside the update would see the
// statement's snapshot, taken before the wait: an invoice open there, yet
// paid or voided by the time the void answered.) Only a paid invoice is
// left unchanged, and paid is final, so a later read finds it paid.
func Void(ctx context.Context, q store.Querier, s tenant.Scope, invoiceID string, now time.Time) (Invoice, error) {
	var invs []Invoice
	err := q.SelectContext(ctx, &invs, `UPDATE invoices SET status = 'void', voided_at = coalesce(voided_at, $4)
		WHERE merchant_id = $1 AND mode = $2 AND id = $3 AND status <> 'paid' RETURNING `+columns,
		s.MerchantID, s.Mode, invoiceID, now)
	if err != nil {
		return Invoice{}, store.Translate(err)
	}
	if len(invs) == 0 {
		err = q.SelectContext(ctx, &invs, `SELECT `+columns+` FROM invoices WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
			s.MerchantID, s.Mode, invoiceID)
		if err != nil {
			return Invoice{}, store.Translate(err)
		}
	}
	if len(invs) == 0 {
		return Invoice{}, apperr.New(apperr.ResourceNotFound, "no invoice %q", invoiceID)
	}
	if invs[0].Status == StatusPaid {
		return Invoice{}, apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid; refund its payment instead", invoiceID)
	}
	return invs[0], nil
}

// MerchantOf returns the merchant of the invoice with id (any merchant:
// checkout starts from an invoice's id), by a read that locks nothing;
// ok=false when there is none.
func MerchantOf(ctx context.Context, q store.Querier, invoiceID string) (string, bool, error) {
	var ms []string
	err := q.SelectContext(ctx, &ms, `SELECT merchant_id FROM invoices WHERE id = $1`, invoiceID)
	if err != nil || len(ms) == 0 {
		return "", false, store.Translate(err)
	}
	return ms[0], true, nil
}

// Lock returns the invoice with id locked FOR UPDATE in tx (any merchant:
// checkout); ok=false when there is none. The lock is taken by its key,
// merchant first, so it stays on one merchant.
func Lock(ctx context.Context, tx *store.Tx, invoiceID string) (Invoice, bool, error) {
	merchantID, ok, err := MerchantOf(ctx, tx, invoiceID)
	if err != nil || !ok {
		return Invoice{}, false, err
	}
	var invs []Invoice
	err = tx.SelectContext(ctx, &invs, `SELECT `+columns+` FROM invoices WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, merchantID, invoiceID)
	if err != nil || len(invs) == 0 {
		return Invoice{}, false, store.Translate(err)
	}
	return invs[0], true, nil
}

// PaidCTE is a WITH item, name, marking open invoices paid in the statement
// that records their payments: query yields one row a payment, with the
// columns merchant_id, invoice_id, payment_id and at. An invoice no longer
// open is left as it is; two payments of one invoice mark it paid once.
// The item returns payment_id of the payments that marked theirs. An
// invoice is found by its primary key (merchant_id, id), as Lock finds it:
// with mode in the condition too, a generic plan made while the table
// had no statistics scanned invoices_list, every invoice of the merchant.
func PaidCTE(name, query string) string {
	return name + ` AS (
		UPDATE invoices i SET status = 'paid', paid_at = q.at, payment_id = q.payment_id
		FROM (` + query + `) q WHERE i.merchant_id = q.merchant_id AND i.id = q.invoice_id AND i.status = 'open' RETURNING q.payment_id
	)`
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

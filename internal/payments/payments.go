// Package payments owns confirmed on-chain payments. Checkout records them;
// the API lists them.
package payments

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Payment is a confirmed payment.
type Payment struct {
	MerchantID     string       `db:"merchant_id"`
	Mode           tenant.Mode  `db:"mode"`
	ID             string       `db:"id"`
	Seq            int64        `db:"seq"`
	InvoiceID      *string      `db:"invoice_id"`
	SubscriptionID *string      `db:"subscription_id"`
	Amount         money.Amount `db:"amount"`
	Payer          *string      `db:"payer"`
	TxHash         *string      `db:"tx_hash"`
	Status         string       `db:"status"`
	CreatedAt      time.Time    `db:"created_at"`
}

const columns = `merchant_id, mode, id, seq, invoice_id, subscription_id, amount, payer, tx_hash, status, created_at`

// List returns a page of the scope's payments, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Payment], error) {
	return page.Select(ctx, q, "payments", columns, s, p, Payment.Position)
}

// Position is the payment's place in the list, for cursors.
func (x Payment) Position() page.Cursor { return page.Cursor{At: x.CreatedAt, Seq: x.Seq} }

// Wire returns the payment's public form.
func (p Payment) Wire() wire.Payment {
	return wire.Payment{
		Object: "payment", ID: p.ID, Amount: p.Amount.String(), Status: p.Status, InvoiceID: p.InvoiceID,
		SubscriptionID: p.SubscriptionID, Payer: p.Payer, TxHash: p.TxHash, CreatedAt: wire.Timestamp(p.CreatedAt), Livemode: p.Mode == tenant.Live,
	}
}

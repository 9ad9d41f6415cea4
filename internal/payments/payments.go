// Package payments owns confirmed payments: the record of a settled invoice
// or subscription charge, its refunds, and the lists and reads of the API.
// Checkout and the billing engine record payments here, in their own
// transactions.
package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Payment statuses.
const (
	StatusSucceeded         = "succeeded"
	StatusPartiallyRefunded = "partially_refunded"
	StatusRefunded          = "refunded"
)

// Payment is a confirmed payment.
type Payment struct {
	MerchantID     string       `db:"merchant_id"`
	Mode           tenant.Mode  `db:"mode"`
	ID             string       `db:"id"`
	Seq            int64        `db:"seq"`
	InvoiceID      *string      `db:"invoice_id"`
	SubscriptionID *string      `db:"subscription_id"`
	CustomerID     *string      `db:"customer_id"`
	Amount         money.Amount `db:"amount"`
	AmountRefunded money.Amount `db:"amount_refunded"`
	Payer          *string      `db:"payer"`
	Payee          *string      `db:"payee"`
	Network        string       `db:"network"`
	TxHash         *string      `db:"tx_hash"`
	Status         string       `db:"status"`
	ConfirmedAt    *time.Time   `db:"confirmed_at"`
	PeriodStart    *time.Time   `db:"period_start"`
	PeriodEnd      *time.Time   `db:"period_end"`
	Lines          []byte       `db:"lines"`
	SettlementKey  *string      `db:"settlement_key"`
	CreatedAt      time.Time    `db:"created_at"`
}

const columns = `merchant_id, mode, id, seq, invoice_id, subscription_id, customer_id, amount, amount_refunded, payer, payee,
	network, tx_hash, status, confirmed_at, period_start, period_end, lines, settlement_key, created_at`

// FromSettlement is the payment recording a succeeded settlement, at the
// settlement's time.
func FromSettlement(s tenant.Scope, st rail.Settlement) Payment {
	payer, payee, hash, key, at := st.Payer, st.Payee, st.TxHash, st.Key, st.At
	return Payment{MerchantID: s.MerchantID, Mode: s.Mode, ID: id.New("pay"), Amount: st.Amount, Payer: &payer, Payee: &payee,
		Network: st.Network, TxHash: &hash, Status: StatusSucceeded, ConfirmedAt: &at, SettlementKey: &key, CreatedAt: at}
}

// Insert stores p in tx. A payment already recorded for the same
// settlement is returned instead (replayed=true): a settlement is paid for
// once.
func Insert(ctx context.Context, tx *store.Tx, p Payment) (stored Payment, replayed bool, err error) {
	var rows []Payment
	err = tx.SelectContext(ctx, &rows, `INSERT INTO payments (merchant_id, mode, id, invoice_id, subscription_id, customer_id, amount, payer, payee,
			network, tx_hash, status, confirmed_at, period_start, period_end, lines, settlement_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
		ON CONFLICT (merchant_id, mode, settlement_key) DO NOTHING RETURNING `+columns,
		p.MerchantID, p.Mode, p.ID, p.InvoiceID, p.SubscriptionID, p.CustomerID, p.Amount, p.Payer, p.Payee,
		p.Network, p.TxHash, p.Status, p.ConfirmedAt, p.PeriodStart, p.PeriodEnd, nullJSON(p.Lines), p.SettlementKey, p.CreatedAt)
	if err != nil {
		return Payment{}, false, store.Translate(err)
	}
	if len(rows) == 1 {
		return rows[0], false, nil
	}
	err = tx.GetContext(ctx, &stored, `SELECT `+columns+` FROM payments WHERE merchant_id = $1 AND mode = $2 AND settlement_key = $3`,
		p.MerchantID, p.Mode, p.SettlementKey)
	return stored, true, store.Translate(err)
}

func nullJSON(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// List returns a page of the scope's payments, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Payment], error) {
	return page.Select(ctx, q, "payments", columns, s, p, Payment.Position)
}

// Get returns the scope's payment with id; unknown is resource_not_found.
func Get(ctx context.Context, q store.Querier, s tenant.Scope, paymentID string) (Payment, error) {
	var ps []Payment
	err := q.SelectContext(ctx, &ps, `SELECT `+columns+` FROM payments WHERE merchant_id = $1 AND mode = $2 AND id = $3`, s.MerchantID, s.Mode, paymentID)
	if err != nil {
		return Payment{}, store.Translate(err)
	}
	if len(ps) == 0 {
		return Payment{}, apperr.New(apperr.ResourceNotFound, "no payment %q", paymentID)
	}
	return ps[0], nil
}

// BySettlement returns the scope's payment recording the settlement with
// key; ok=false when there is none.
func BySettlement(ctx context.Context, q store.Querier, s tenant.Scope, key string) (Payment, bool, error) {
	var ps []Payment
	err := q.SelectContext(ctx, &ps, `SELECT `+columns+` FROM payments WHERE merchant_id = $1 AND mode = $2 AND settlement_key = $3`, s.MerchantID, s.Mode, key)
	if err != nil || len(ps) == 0 {
		return Payment{}, false, store.Translate(err)
	}
	return ps[0], true, nil
}

// Position is the payment's place in the list, for cursors.
func (p Payment) Position() page.Cursor { return page.Cursor{At: p.CreatedAt, Seq: p.Seq} }

// Scope is the payment's merchant and mode.
func (p Payment) Scope() tenant.Scope { return tenant.Scope{MerchantID: p.MerchantID, Mode: p.Mode} }

// Wire returns the payment's public form.
func (p Payment) Wire() wire.Payment {
	return wire.Payment{
		Object: "payment", ID: p.ID, Amount: p.Amount.String(), Currency: "usdc", Status: p.Status, AmountRefunded: p.AmountRefunded.String(),
		InvoiceID: p.InvoiceID, SubscriptionID: p.SubscriptionID, CustomerID: p.CustomerID, Payer: p.Payer, Payee: p.Payee,
		Network: p.Network, TxHash: p.TxHash, ConfirmedAt: wire.OptTimestamp(p.ConfirmedAt), PeriodStart: wire.OptTimestamp(p.PeriodStart),
		PeriodEnd: wire.OptTimestamp(p.PeriodEnd), Lines: wire.StoredLines(p.Lines), CreatedAt: wire.Timestamp(p.CreatedAt), Livemode: p.Mode == tenant.Live,
	}
}

// InsertMany stores new payments in tx in one statement. A payment for a
// settlement already recorded is an error: the billing engine records a
// settlement only in the transaction that claimed its subscription.
func InsertMany(ctx context.Context, tx *store.Tx, ps []Payment) error {
	if len(ps) == 0 {
		return nil
	}
	n := len(ps)
	var (
		merchants, modes, ids, payers, payees, networks, hashes, statuses, keys = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		invoices, subs, custs, lines              = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		amounts, confirmed, starts, ends, created = make([]string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]string, n)
	)
	for i, p := range ps {
		merchants[i], modes[i], ids[i], payers[i], payees[i] = p.MerchantID, string(p.Mode), p.ID, deref(p.Payer), deref(p.Payee)
		networks[i], hashes[i], statuses[i], keys[i] = p.Network, deref(p.TxHash), p.Status, deref(p.SettlementKey)
		invoices[i], subs[i], custs[i], lines[i] = p.InvoiceID, p.SubscriptionID, p.CustomerID, nullJSON(p.Lines)
		amounts[i], confirmed[i], starts[i], ends[i], created[i] = p.Amount.String(), optTime(p.ConfirmedAt), optTime(p.PeriodStart), optTime(p.PeriodEnd), stamp(p.CreatedAt)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO payments (merchant_id, mode, id, payer, payee, network, tx_hash, status, settlement_key,
			invoice_id, subscription_id, customer_id, lines, amount, confirmed_at, period_start, period_end, created_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::text[], $11::text[], $12::text[], $13::jsonb[], $14::numeric[], $15::timestamptz[], $16::timestamptz[], $17::timestamptz[], $18::timestamptz[])
		ON CONFLICT (merchant_id, mode, settlement_key) DO NOTHING`,
		pq.StringArray(merchants), pq.StringArray(modes), pq.StringArray(ids), pq.StringArray(payers), pq.StringArray(payees),
		pq.StringArray(networks), pq.StringArray(hashes), pq.StringArray(statuses), pq.StringArray(keys),
		store.NullTexts(invoices), store.NullTexts(subs), store.NullTexts(custs), store.NullTexts(lines),
		pq.StringArray(amounts), store.NullTexts(confirmed), store.NullTexts(starts), store.NullTexts(ends), pq.StringArray(created))
	if err != nil {
		return store.Translate(err)
	}
	if got, _ := res.RowsAffected(); int(got) != n {
		return fmt.Errorf("payments: %d of %d settlements were recorded already", n-int(got), n)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

// ListForCustomer returns a page of the scope's payments of customerID,
// newest first, with List's cursor semantics (an index per customer keeps
// it from scanning the merchant's payments).
func ListForCustomer(ctx context.Context, q store.Querier, s tenant.Scope, customerID string, p page.Params) (page.Result[Payment], error) {
	return listOf(ctx, q, s, "customer_id", customerID, p)
}

// ListForSubscription returns a page of the scope's payments of
// subscriptionID, newest first, with List's cursor semantics (an index per
// subscription keeps it from scanning the merchant's payments).
func ListForSubscription(ctx context.Context, q store.Querier, s tenant.Scope, subscriptionID string, p page.Params) (page.Result[Payment], error) {
	return listOf(ctx, q, s, "subscription_id", subscriptionID, p)
}

// listOf is a page of the scope's payments whose column (a constant of
// this package, never a caller's text) is value.
func listOf(ctx context.Context, q store.Querier, s tenant.Scope, column, value string, p page.Params) (page.Result[Payment], error) {
	where, args := p.Where(4)
	rows := []Payment{}
	err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM payments
		WHERE merchant_id = $1 AND mode = $2 AND `+column+` = $3 AND `+where+` `+p.Order(),
		append([]any{s.MerchantID, s.Mode, value}, args...)...)
	if err != nil {
		return page.Result[Payment]{}, store.Translate(err)
	}
	return page.Build(rows, p, Payment.Position), nil
}

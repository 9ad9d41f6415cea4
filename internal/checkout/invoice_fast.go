package checkout

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
)

// The common payment, an open invoice paid with a wallet the test rail
// accepts, is two statements and no explicit transaction: a read of the
// invoice with its terms, then one statement that marks it paid and, only if
// it was still open, writes the settlement, the payment, invoice.paid and
// its deliveries. One statement is one transaction: it all commits or none
// of it does. What the read saw may be stale by then; the write's own
// conditions decide (the invoice still open, the ledger's unique keys), and
// anything else — a double submit, a race lost, a void invoice, a declined
// wallet, a live rail — goes the locked way (payInvoiceTx), which answers
// it as before. Before: BEGIN, lock, terms, settlement, payment, invoice,
// event, COMMIT (8 round trips); now 2. The write is one statement for any
// number of payments, the payments package's (payments.InvoicePayments):
// alone, a payment is a batch of one; under load it shares the write with
// the payments that arrived meanwhile. The locked way records its payments
// with the same statement, a batch of one in its transaction, less the
// settlement its rail stored there (payments.PayInvoiceTx).

// invoiceTerms is an invoice with its merchant's wallet on file and test
// clock offset (see Env.terms).
type invoiceTerms struct {
	invoices.Invoice
	Wallet  *string `db:"wallet"`
	AheadUS *int64  `db:"ahead_us"`
}

// invoiceTermsFrom reads invoices with their terms; invoiceTermsSQL and
// lockInvoiceSQL say which.
const invoiceTermsFrom = `SELECT ` + invoices.Columns + `,
		(SELECT w.address FROM settlement_wallets w
			WHERE w.merchant_id = invoices.merchant_id AND w.mode = invoices.mode AND w.replaced_at IS NULL) AS wallet,
		(SELECT c.ahead_us FROM test_clocks c WHERE c.merchant_id = invoices.merchant_id) AS ahead_us
	FROM invoices`

const invoiceTermsSQL = invoiceTermsFrom + ` WHERE id = $1`

// lockInvoiceSQL is invoiceTermsSQL locking the invoice, found by its key
// ($1 the merchant, $2 the id) so the lock stays on one merchant: the
// locked path reads its terms with the lock.
const lockInvoiceSQL = invoiceTermsFrom + ` WHERE merchant_id = $1 AND id = $2 FOR UPDATE OF invoices`

// payInvoiceFast pays an open invoice in two statements when it can (the
// write in a group commit: payments.InvoicePayments); done=false leaves the
// payment to the locked path, nothing written.
func (e Env) payInvoiceFast(ctx context.Context, invoiceID string, in Input) (rail.Settlement, payments.Payment, invoices.Invoice, bool, error) {
	if e.Writers == nil {
		return rail.Settlement{}, payments.Payment{}, invoices.Invoice{}, false, nil
	}
	w, ok, err := e.preparePay(ctx, invoiceID, in)
	if err != nil || !ok {
		return w.Settlement, payments.Payment{}, w.Paid, err != nil, err
	}
	res := e.Writers.pays.Write(w)
	if res.Err != nil || !res.OK {
		return w.Settlement, payments.Payment{}, w.Paid, res.Err != nil, res.Err
	}
	return w.Settlement, res.Payment, w.Paid, true, nil
}

// preparePay reads the invoice with its terms and decides the payment's
// write; ok=false leaves it to the locked path.
func (e Env) preparePay(ctx context.Context, invoiceID string, in Input) (w payments.InvoicePayment, ok bool, err error) {
	var rows []invoiceTerms
	if err := e.DB.SelectContext(ctx, &rows, invoiceTermsSQL, invoiceID); err != nil {
		return w, false, store.Translate(err)
	}
	if len(rows) == 0 || rows[0].Status != invoices.StatusOpen {
		return w, false, nil
	}
	inv := rows[0].Invoice
	s := inv.Scope()
	rl, _ := e.Rail(s.Mode)
	decider, ok := rl.(rail.Deciding)
	if !ok {
		return w, false, nil
	}
	who, err := payer(s, in.Payer)
	if err != nil {
		return w, false, nil
	}
	payee, now, err := e.termsOf(s, inv.Payee, rows[0].Wallet, rows[0].AheadUS)
	if err != nil {
		return w, false, nil
	}
	st, ok := decider.Decide(payRequest(inv, who, payee, now))
	if !ok || st.Status != rail.Succeeded {
		return w, false, nil
	}
	w, err = payments.NewInvoicePayment(inv, st, e.BaseURL)
	return w, err == nil, err
}

package payments

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
)

// On this machine's disks a commit's flush is milliseconds and PostgreSQL
// groups only the commits already waiting when a flush starts: an invoice
// payment under load spent most of its time waiting for WALWrite. So the
// payments of open invoices a Deciding rail settles (test mode) are written
// in one statement for any number of them (invoicePaymentsSQL), and
// concurrent ones share it (InvoicePayments, a batch.Group): alone, a
// payment is a batch of one of the same statement. A payment whose
// settlement is in the ledger already (a rail that settled inside the
// caller's transaction, or outside the database) is a batch of one of that
// statement too, in the caller's transaction, writing everything but the
// settlement (PayInvoiceTx).

// InvoicePayment is the payment of an open invoice by a succeeded
// settlement, everything decided: one a Deciding rail decided
// (NewInvoicePayment), or one in the ledger already (PayInvoiceTx).
type InvoicePayment struct {
	// Paid is the invoice as the payment leaves it.
	Paid       invoices.Invoice
	Settlement rail.Settlement
	// data is invoice.paid's data: Paid's wire form.
	data string
	// settle: the rail decided Settlement without storing it, and the
	// statement stores it with the payment. Else the ledger has it.
	settle bool
}

// NewInvoicePayment is the payment of the open invoice inv by st, a
// settlement a Deciding rail decided and did not store: the invoice paid,
// pointing at a new payment, and invoice.paid's data (checkout links
// prefixed with baseURL). Its write stores st too.
func NewInvoicePayment(inv invoices.Invoice, st rail.Settlement, baseURL string) (InvoicePayment, error) {
	p, err := invoicePayment(inv, st, baseURL)
	p.settle = true
	return p, err
}

func invoicePayment(inv invoices.Invoice, st rail.Settlement, baseURL string) (InvoicePayment, error) {
	p := InvoicePayment{Paid: inv, Settlement: st}
	payID := id.New("pay")
	p.Paid.Status, p.Paid.PaidAt, p.Paid.PaymentID = invoices.StatusPaid, &p.Settlement.At, &payID
	data, err := json.Marshal(p.Paid.Wire(baseURL))
	p.data = string(data)
	return p, err
}

// InvoicePaid is the outcome of an InvoicePayment's write: OK=false when
// nothing was written (the invoice no longer open, or its settlement
// already in the ledger: the caller's locked path is to decide), Err when
// the write failed otherwise.
type InvoicePaid struct {
	Payment    Payment
	OK         bool
	Deliveries bool
	Err        error
}

// InvoicePayments group-commits invoice payments: concurrent Writes share
// one statement.
type InvoicePayments struct {
	g *batch.Group[InvoicePayment, InvoicePaid]
}

// NewInvoicePayments returns the invoice payments' group commit of db.
func NewInvoicePayments(db *store.DB) *InvoicePayments {
	return &InvoicePayments{g: batch.New(func(calls []*batch.Call[InvoicePayment, InvoicePaid]) { RunInvoicePayments(db, calls) }, 0, 0)}
}

// Write writes p, in a batch with the payments written meanwhile.
func (w *InvoicePayments) Write(p InvoicePayment) InvoicePaid { return w.g.Do(p) }

// batchTimeout bounds a batch's statement: it runs for several requests,
// so no one request's context cancels it.
const batchTimeout = 30 * time.Second

// RunInvoicePayments writes a batch of payments (WriteInvoicePayments). A
// batch whose statement fails (one payment's settlement already in the
// ledger fails them all) is written one by one, each a batch of one.
func RunInvoicePayments(db *store.DB, calls []*batch.Call[InvoicePayment, InvoicePaid]) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	batch.OneByOne(calls, func(calls []*batch.Call[InvoicePayment, InvoicePaid]) error {
		return WriteInvoicePayments(ctx, db, calls)
	}, func(err error) InvoicePaid {
		// The ledger has its key, or the invoice was paid by another payer
		// whose settlement is not recorded yet (or a deadlock with another
		// batch): the locked path answers. Anything else is an error.
		if store.UniqueViolation(err, "") || store.Retryable(err) {
			return InvoicePaid{}
		}
		return InvoicePaid{Err: store.Translate(err)}
	})
	for _, c := range calls {
		if c.Out.Deliveries {
			db.Notify(events.DeliveryChannel)
			return
		}
	}
}

// invoicePaymentsSQL is the statement paying invoices in one statement, one array element a
// payment of any invoice. Each write reads the rows of the one before, so
// nothing is written for an invoice that was no longer open; the settlement
// (when the rail only decided it: settle) and the payment are plain
// inserts, so one already in the ledger fails the whole statement rather
// than leave a half-written payment. Two payments of one invoice in a batch
// (two payers, or a double submit) mark it paid once: one is written, the
// other writes nothing, as alone.
func invoicePaymentsSQL() string {
	return `WITH v AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::text[],
			$9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::jsonb[], $15::boolean[])
		AS v(merchant_id, mode, invoice_id, key, payer, payee, amount, tx_hash, at, payment_id, network, event_id, event_type, data, settle)
	), ` + invoices.PaidCTE("inv", `SELECT merchant_id, invoice_id, payment_id, at FROM v`) + `,
	` + rail.DecidedCTE("st", `SELECT v.merchant_id, v.mode, v.key, 'pay' AS kind, v.invoice_id AS nonce, v.payer, v.payee, v.amount,
			v.tx_hash, v.at FROM inv JOIN v ON v.payment_id = inv.payment_id WHERE v.settle`) + `,
	` + InsertCTE("pay", `SELECT v.merchant_id, v.mode, v.payment_id AS id, v.invoice_id, NULL::text AS subscription_id,
			NULL::text AS customer_id, v.amount, v.payer, v.payee, v.network, v.tx_hash, v.at, NULL::timestamptz AS period_start,
			NULL::timestamptz AS period_end, NULL::jsonb AS lines, v.key AS settlement_key
		FROM inv JOIN v ON v.payment_id = inv.payment_id`) + `,
	` + events.InsertCTE(`SELECT v.merchant_id, v.mode, v.event_id AS id, v.event_type AS type, v.data, v.at
		FROM pay JOIN v ON v.payment_id = pay.id`) + `
	SELECT pay.*, (SELECT count(*) FROM d) AS deliveries FROM pay`
}

// WriteInvoicePayments writes calls in one statement (invoicePaymentsSQL)
// and sets their outcomes; an error when the statement failed (nothing
// written).
func WriteInvoicePayments(ctx context.Context, db *store.DB, calls []*batch.Call[InvoicePayment, InvoicePaid]) error {
	ps := make([]InvoicePayment, len(calls))
	for i, c := range calls {
		ps[i] = c.In
	}
	written, deliveries, err := writeInvoicePayments(ctx, db, ps)
	if err != nil {
		return err
	}
	for _, c := range calls {
		p, ok := written[*c.In.Paid.PaymentID]
		c.Out = InvoicePaid{Payment: p, OK: ok, Deliveries: ok && deliveries}
	}
	return nil
}

// PayInvoiceTx records in tx the payment of the open invoice inv, locked
// by tx, by st, a succeeded settlement the ledger has already (the rail
// settled it in tx, or outside the database): the payment, the invoice
// paid and invoice.paid (checkout links prefixed with baseURL), a batch of
// one of the invoice payments' statement. It returns the payment and the
// invoice as it leaves it. The payment is a plain insert: the caller
// answers a paid invoice (and with it a settlement recorded before)
// without writing.
func PayInvoiceTx(ctx context.Context, tx *store.Tx, inv invoices.Invoice, st rail.Settlement, baseURL string) (Payment, invoices.Invoice, error) {
	w, err := invoicePayment(inv, st, baseURL)
	if err != nil {
		return Payment{}, inv, err
	}
	written, deliveries, err := writeInvoicePayments(ctx, tx, []InvoicePayment{w})
	if err != nil {
		return Payment{}, inv, store.Translate(err)
	}
	p, ok := written[*w.Paid.PaymentID]
	if !ok {
		// Not open after all: the caller's lock says it is.
		return Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is %s", inv.ID, inv.Status)
	}
	if deliveries {
		tx.Notify(events.DeliveryChannel)
	}
	return p, w.Paid, nil
}

// writeInvoicePayments runs invoicePaymentsSQL over ps and returns the
// payments written by id, and whether any webhook delivery was made.
func writeInvoicePayments(ctx context.Context, q store.Querier, ps []InvoicePayment) (map[string]Payment, bool, error) {
	n := len(ps)
	col := func() pq.StringArray { return make(pq.StringArray, n) }
	merchants, modes, invoiceIDs, keys, payers, payees, amounts := col(), col(), col(), col(), col(), col(), col()
	hashes, ats, payIDs, networks, eventIDs, types, datas := col(), col(), col(), col(), col(), col(), col()
	settle := make(pq.BoolArray, n)
	for i, w := range ps {
		inv, st := w.Paid, w.Settlement
		merchants[i], modes[i], invoiceIDs[i], keys[i], payers[i] = inv.MerchantID, string(inv.Mode), inv.ID, st.Key, st.Payer
		payees[i], amounts[i], hashes[i], ats[i], payIDs[i] = st.Payee, st.Amount.String(), st.TxHash, stamp(st.At), *inv.PaymentID
		networks[i], eventIDs[i], types[i], datas[i], settle[i] = st.Network, id.New("evt"), events.InvoicePaid, w.data, w.settle
	}
	var out []struct {
		Payment
		Deliveries int `db:"deliveries"`
	}
	if err := q.SelectContext(ctx, &out, invoicePaymentsSQL(), merchants, modes, invoiceIDs, keys, payers, payees, amounts,
		hashes, ats, payIDs, networks, eventIDs, types, datas, settle); err != nil {
		return nil, false, err
	}
	written := make(map[string]Payment, len(out))
	for _, o := range out {
		written[o.ID] = o.Payment
	}
	return written, len(out) > 0 && out[0].Deliveries > 0, nil
}

// InsertCTE is a WITH item, name, storing succeeded payments in a
// statement that records what they pay for (an invoice paid, a checkout's
// subscription): query yields one row a payment, with the columns
// merchant_id, mode, id, invoice_id, subscription_id, customer_id, amount,
// payer, payee, network, tx_hash, at (confirmed and created), period_start,
// period_end, lines and settlement_key. A plain insert: a payment already
// recorded for its settlement fails the whole statement. The item returns
// the payments stored.
func InsertCTE(name, query string) string {
	return name + ` AS (
		INSERT INTO payments (merchant_id, mode, id, invoice_id, subscription_id, customer_id, amount, payer, payee, network, tx_hash,
			status, confirmed_at, period_start, period_end, lines, settlement_key, created_at)
		SELECT q.merchant_id, q.mode, q.id, q.invoice_id, q.subscription_id, q.customer_id, q.amount, q.payer, q.payee, q.network,
			q.tx_hash, 'succeeded', q.at, q.period_start, q.period_end, q.lines, q.settlement_key, q.at
		FROM (` + query + `) q RETURNING ` + columns + `
	)`
}

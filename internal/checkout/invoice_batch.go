package checkout

import (
	"context"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/store"
)

// runPays writes a batch of payments in one statement
// (payInvoiceBatchSQL). A batch whose statement fails (one payment's
// settlement already in the ledger fails them all) is written one by one,
// each a batch of one.
func runPays(db *store.DB, calls []*batch.Call[payWrite, payResult]) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	if err := writePaysErr(ctx, db, calls); err != nil {
		for _, c := range calls {
			if len(calls) == 1 {
				c.Out = failedPay(err)
			} else if err := writePaysErr(ctx, db, []*batch.Call[payWrite, payResult]{c}); err != nil {
				c.Out = failedPay(err)
			}
		}
	}
	for _, c := range calls {
		if c.Out.deliveries {
			db.Notify(events.DeliveryChannel)
			return
		}
	}
}

// failedPay is the outcome of a payment whose statement failed alone: the
// ledger has its key, or the invoice was paid by another payer whose
// settlement is not recorded yet (or a deadlock with another batch), and
// the locked path answers; anything else is an error.
func failedPay(err error) payResult {
	if store.UniqueViolation(err, "") || store.Retryable(err) {
		return payResult{}
	}
	return payResult{err: store.Translate(err)}
}

// payInvoiceBatchSQL pays invoices the test rail settles, in one
// statement, one array element a payment of any invoice. Each write reads
// the rows of the one before, so nothing is written for an invoice that
// was no longer open; the settlement and the payment are plain inserts, so
// one already in the ledger fails the whole statement (unique violation)
// rather than leave a half-written payment. The event and its deliveries
// are events.Emit's statement. An invoice is found by its primary key
// (merchant_id, id), as invoices.MarkPaid finds it: with mode in the
// condition too, a generic plan made while the table had no statistics
// scanned invoices_list, every invoice of the merchant. Two payments of
// one invoice in a batch (two payers, or a double submit) mark it paid
// once: one is written, the other writes nothing, as alone.
const payInvoiceBatchSQL = `WITH v AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::text[],
			$9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::jsonb[])
		AS v(merchant_id, mode, invoice_id, key, payer, payee, amount, tx_hash, at, payment_id, network, event_id, event_type, data)
	), inv AS (
		UPDATE invoices i SET status = 'paid', paid_at = v.at, payment_id = v.payment_id
		FROM v WHERE i.merchant_id = v.merchant_id AND i.id = v.invoice_id AND i.status = 'open' RETURNING v.payment_id
	), st AS (
		INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
		SELECT v.merchant_id, v.mode, v.key, 'pay', v.invoice_id, v.payer, v.payee, v.amount, 'succeeded', v.tx_hash, v.at
		FROM inv JOIN v ON v.payment_id = inv.payment_id RETURNING merchant_id, key
	), pay AS (
		INSERT INTO payments (merchant_id, mode, id, invoice_id, amount, payer, payee, network, tx_hash, status, confirmed_at,
			settlement_key, created_at)
		SELECT v.merchant_id, v.mode, v.payment_id, v.invoice_id, v.amount, v.payer, v.payee, v.network, v.tx_hash, 'succeeded', v.at,
			v.key, v.at
		FROM st JOIN v ON v.merchant_id = st.merchant_id AND v.key = st.key
		RETURNING ` + payments.Columns + `
	), ev AS (
		INSERT INTO events (merchant_id, mode, id, type, data, occurred_at)
		SELECT v.merchant_id, v.mode, v.event_id, v.event_type, v.data, v.at
		FROM pay JOIN v ON v.payment_id = pay.id RETURNING merchant_id, mode, id, type
	), ` + events.DeliveriesCTE + `
	SELECT pay.*, (SELECT count(*) FROM d) AS deliveries FROM pay`

// writePays writes calls with payInvoiceBatchSQL and sets their outcomes;
// false when the statement failed (nothing written).
func writePays(ctx context.Context, db *store.DB, calls []*batch.Call[payWrite, payResult]) bool {
	return writePaysErr(ctx, db, calls) == nil
}

// writePaysErr is writePays with the statement's error.
func writePaysErr(ctx context.Context, db *store.DB, calls []*batch.Call[payWrite, payResult]) error {
	n := len(calls)
	col := func() pq.StringArray { return make(pq.StringArray, n) }
	merchants, modes, invoiceIDs, keys, payers, payees, amounts := col(), col(), col(), col(), col(), col(), col()
	hashes, ats, payIDs, networks, eventIDs, types, datas := col(), col(), col(), col(), col(), col(), col()
	for i, c := range calls {
		w := c.In
		merchants[i], modes[i], invoiceIDs[i], keys[i], payers[i] = w.paid.MerchantID, string(w.paid.Mode), w.paid.ID, w.st.Key, w.st.Payer
		payees[i], amounts[i], hashes[i], ats[i], payIDs[i] = w.st.Payee, w.st.Amount.String(), w.st.TxHash, *stamp(w.st.At), w.payID
		networks[i], eventIDs[i], types[i], datas[i] = w.st.Network, w.eventID, events.InvoicePaid, w.data
	}
	var out []struct {
		payments.Payment
		Deliveries int `db:"deliveries"`
	}
	if err := db.SelectContext(ctx, &out, payInvoiceBatchSQL, merchants, modes, invoiceIDs, keys, payers, payees, amounts,
		hashes, ats, payIDs, networks, eventIDs, types, datas); err != nil {
		return err
	}
	byID := make(map[string]payments.Payment, len(out))
	for _, o := range out {
		byID[o.ID] = o.Payment
	}
	deliveries := len(out) > 0 && out[0].Deliveries > 0
	for _, c := range calls {
		p, ok := byID[c.In.payID]
		c.Out = payResult{pay: p, ok: ok, deliveries: ok && deliveries}
	}
	return nil
}

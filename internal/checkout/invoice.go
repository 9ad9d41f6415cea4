package checkout

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
)

// invoicePayment is the outcome of paying an invoice in one transaction:
// the payment, a declined settlement (committed, so the same key answers it
// again), or the rail to ask outside the transaction.
type invoicePayment struct {
	inv      invoices.Invoice
	who      string
	st       rail.Settlement
	pay      payments.Payment
	declined *rail.Settlement
	remote   rail.Rail
}

// PayInvoice pays the open invoice with id (any merchant: checkout links
// are public and ids unguessable) from the payer's wallet, and records the
// payment, the invoice paid and invoice.paid in one transaction. Paying an
// invoice the same payer already paid returns that payment; an invoice paid
// by someone else, or void, is invoice_not_open (409). Fails with
// resource_not_found, invalid_request (payer), payment_failed (402, naming
// the rail's reason, or saying the payment awaits confirmation).
//
// With a local rail (test mode) the settlement is made in that transaction
// too, under the invoice's row lock: one commit, and two payers racing for
// the invoice are served one after the other. Another rail is asked first,
// then the outcome recorded (payInvoiceRemote).
func (e Env) PayInvoice(ctx context.Context, invoiceID string, in Input) (payments.Payment, invoices.Invoice, error) {
	st, p, inv, err := e.SubmitInvoice(ctx, invoiceID, in)
	if err == nil && st.Status == rail.Pending {
		err = apperr.New(apperr.PaymentFailed, "the payment is submitted and awaits confirmation on chain")
	}
	return p, inv, err
}

// SubmitInvoice is PayInvoice for a rail that may answer pending (the live
// rail awaiting confirmations): it returns the rail's settlement too. A
// succeeded one is recorded as PayInvoice records it; a pending one is not
// recorded yet (the live rail's settlement worker records it with
// RecordInvoicePayment once confirmed). Errors are PayInvoice's.
func (e Env) SubmitInvoice(ctx context.Context, invoiceID string, in Input) (rail.Settlement, payments.Payment, invoices.Invoice, error) {
	if !validText(invoiceID) {
		return rail.Settlement{}, payments.Payment{}, invoices.Invoice{}, apperr.New(apperr.ResourceNotFound, "no such invoice")
	}
	if err := e.checkMode(ctx, invoiceID); err != nil {
		return rail.Settlement{}, payments.Payment{}, invoices.Invoice{}, err
	}
	if st, p, inv, done, err := e.payInvoiceFast(ctx, invoiceID, in); done {
		return st, p, inv, err
	}
	var out invoicePayment
	err := e.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = e.payInvoiceTx(ctx, tx, invoiceID, in)
		return err
	})
	switch {
	case err != nil:
		return out.st, payments.Payment{}, out.inv, err
	case out.declined != nil:
		return *out.declined, payments.Payment{}, out.inv, failed(*out.declined)
	case out.remote != nil:
		return e.payInvoiceRemote(ctx, out.inv, out.who, out.remote, in.Payload)
	}
	return out.st, out.pay, out.inv, nil
}

func (e Env) payInvoiceTx(ctx context.Context, tx *store.Tx, invoiceID string, in Input) (invoicePayment, error) {
	merchantID, found, err := invoices.MerchantOf(ctx, tx, invoiceID)
	if err != nil {
		return invoicePayment{}, err
	}
	var rows []invoiceTerms
	if found {
		if err := tx.SelectContext(ctx, &rows, lockInvoiceSQL, merchantID, invoiceID); err != nil {
			return invoicePayment{}, store.Translate(err)
		}
	}
	if len(rows) == 0 {
		return invoicePayment{}, apperr.New(apperr.ResourceNotFound, "no invoice %q", invoiceID)
	}
	inv := rows[0].Invoice
	out := invoicePayment{inv: inv}
	s := inv.Scope()
	if out.who, err = payer(s, in.Payer); err != nil {
		return out, err
	}
	if inv.Status == invoices.StatusVoid {
		return out, apperr.New(apperr.InvoiceNotOpen, "invoice %s is void", inv.ID)
	}
	rl, err := e.railFor(s)
	if err != nil {
		return out, err
	}
	local, ok := rl.(rail.Local)
	if !ok {
		out.remote = rl
		return out, nil
	}
	key := payKey(inv, out.who)
	if inv.Status == invoices.StatusPaid {
		if out.pay, err = paidBy(ctx, tx, inv, key); err == nil {
			out.st = rail.Settlement{Key: key, Status: rail.Succeeded, Payer: out.who}
		}
		return out, err
	}
	payee, now, err := e.termsOf(s, inv.Payee, rows[0].Wallet, rows[0].AheadUS)
	if err != nil {
		return out, err
	}
	st, err := local.SettleTx(ctx, tx, payRequest(inv, out.who, payee, now))
	switch {
	case err != nil:
		return out, err
	case st.Status == rail.Failed:
		out.declined = &st
		return out, nil
	case st.Payer != out.who:
		// Another payer's settlement, made outside this transaction and
		// not recorded yet.
		return out, apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid", inv.ID)
	}
	out.st = st
	// Recorded by the statement the group commit writes with, less the
	// settlement SettleTx stored.
	out.pay, out.inv, err = payments.PayInvoiceTx(ctx, tx, inv, st, e.BaseURL)
	return out, err
}

func payKey(inv invoices.Invoice, who string) string { return "pay:" + inv.ID + ":" + who }

// payRequest is the rail request paying inv from who to payee at now (the
// terms), under payKey: whichever path asks, a payer asks the same.
func payRequest(inv invoices.Invoice, who, payee string, now time.Time) rail.Request {
	return rail.Request{Scope: inv.Scope(), Kind: rail.Pay, Key: payKey(inv, who), Nonce: inv.ID,
		Payer: who, Payee: payee, Amount: inv.Amount, At: now}
}

// payInvoiceRemote pays inv with a rail outside the database: the rail is
// asked first, under a key derived from the invoice and the payer, then the
// outcome is recorded; asking again (a double submit, a retry after a
// crash) gets the same settlement and never charges twice. A pending
// settlement is returned unrecorded.
func (e Env) payInvoiceRemote(ctx context.Context, inv invoices.Invoice, who string, rl rail.Rail, payload any) (rail.Settlement, payments.Payment, invoices.Invoice, error) {
	s := inv.Scope()
	key := payKey(inv, who)
	if inv.Status == invoices.StatusPaid && payload != nil {
		// A live payment is never submitted for a paid invoice: the
		// authorization would move the money a second time.
		p, err := paidBy(ctx, e.DB, inv, key)
		if err != nil {
			return rail.Settlement{}, payments.Payment{}, inv, err
		}
		return rail.Settlement{Key: key, Status: rail.Succeeded, Payer: who}, p, inv, nil
	}
	payee, now, err := e.terms(ctx, e.DB, s, inv.Payee)
	if err != nil {
		return rail.Settlement{}, payments.Payment{}, inv, err
	}
	// An invoice is paid at most once (the rail refuses a second payment
	// of one invoice and answers the first): ask, then record.
	req := payRequest(inv, who, payee, now)
	req.Payload = payload
	st, err := rail.SettleOne(ctx, rl, req)
	switch {
	case err != nil:
		return st, payments.Payment{}, inv, err
	case st.Status == rail.Failed:
		return st, payments.Payment{}, inv, failed(st)
	case st.Payer != who:
		return st, payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid", inv.ID)
	case st.Status == rail.Pending:
		return st, payments.Payment{}, inv, nil
	}
	var paid invoices.Invoice
	p, err := store.InTx(ctx, e.DB, func(tx *store.Tx) (payments.Payment, error) {
		var err error
		var pay payments.Payment
		pay, paid, err = e.RecordInvoicePayment(ctx, tx, st)
		return pay, err
	})
	if apperr.CodeOf(err) == apperr.InvoiceNotOpen && paid.Status == invoices.StatusVoid && payload == nil {
		// Voided while the rail settled: the money goes back.
		if _, rerr := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Refund, Key: "void:" + st.Key, Nonce: st.Key,
			Payer: st.Payee, Payee: st.Payer, Amount: st.Amount, At: now}); rerr != nil {
			return st, payments.Payment{}, paid, rerr
		}
	}
	return st, p, paid, err
}

// RecordInvoicePayment records in tx a succeeded settlement of the invoice
// st.Nonce, once: the payment, the invoice paid and invoice.paid. The same
// settlement recorded again returns its payment. It fails with
// invoice_not_open when the invoice is void, or paid by another
// settlement (the invoice is returned then).
func (e Env) RecordInvoicePayment(ctx context.Context, tx *store.Tx, st rail.Settlement) (payments.Payment, invoices.Invoice, error) {
	inv, ok, err := invoices.Lock(ctx, tx, st.Nonce)
	if err != nil || !ok {
		return payments.Payment{}, inv, err
	}
	if inv.Status == invoices.StatusPaid {
		p, err := paidBy(ctx, tx, inv, st.Key)
		return p, inv, err
	}
	if inv.Status != invoices.StatusOpen {
		return payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is %s", inv.ID, inv.Status)
	}
	return payments.PayInvoiceTx(ctx, tx, inv, st, e.BaseURL)
}

// paidBy answers a payment under key of the paid invoice inv: the payment
// recorded for it (a double submit, a retry), else invoice_not_open (paid
// by another payer).
func paidBy(ctx context.Context, q store.Querier, inv invoices.Invoice, key string) (payments.Payment, error) {
	p, ok, err := payments.BySettlement(ctx, q, inv.Scope(), key)
	if err == nil && !ok {
		err = apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid", inv.ID)
	}
	return p, err
}

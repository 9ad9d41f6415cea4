// Package checkout is what happens when a customer pays at a checkout_url:
// an invoice is paid (PayInvoice) or a plan is subscribed to (Subscribe).
// Each asks the rail first, under a key derived from what is being paid,
// then records the outcome with its event in one transaction; asking again
// (a double submit, a retry after a crash) gets the same settlement from
// the rail and never charges twice.
package checkout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Env is what checkout needs beyond the request.
type Env struct {
	DB *store.DB
	// Rail is the rail of a mode; ok=false when it has none (live mode
	// without a chain): paying then fails with payment_failed.
	Rail func(tenant.Mode) (rail.Rail, bool)
	// Now is the time by the merchant's clock.
	Now func(tenant.Scope) time.Time
	// Payee is where a merchant's money goes (its settlement wallet).
	Payee func(ctx context.Context, s tenant.Scope) (string, error)
	// UsageGrace delays a metered period's rating past its end.
	UsageGrace time.Duration
	// BaseURL prefixes checkout links in the objects events carry.
	BaseURL string
}

// Input is a POST /checkout/{id}/pay request: the payer's wallet and, for
// plans, the merchant's id for the customer (default: the payer address in
// lower case).
type Input struct {
	Payer              string
	ExternalCustomerID *string
}

// Decode reads a pay form's fields (payer, external_customer_id) from a
// JSON object (the daemon turns the form into one).
func Decode(o *fields.Object) (Input, error) {
	in := Input{Payer: o.RequiredString("payer", 0, 0), ExternalCustomerID: o.String("external_customer_id", 0, 0)}
	if err := o.Err(); err != nil {
		return in, err
	}
	// A form field is not checked by the JSON decoder: refuse what the
	// database could not store rather than fail on it.
	if !validText(in.Payer) {
		return in, apperr.Field("payer", "must be valid UTF-8 text without NUL")
	}
	if in.ExternalCustomerID != nil && !validText(*in.ExternalCustomerID) {
		return in, apperr.Field("external_customer_id", "must be valid UTF-8 text without NUL")
	}
	return in, nil
}

// railFor returns the rail of s's mode, or payment_failed.
func (e Env) railFor(s tenant.Scope) (rail.Rail, error) {
	if r, ok := e.Rail(s.Mode); ok {
		return r, nil
	}
	return nil, apperr.New(apperr.PaymentFailed, "live payments are not available: this tollgate has no on-chain settlement configured (test mode pays with test wallets)")
}

// payer checks the payer address: a magic wallet in test mode, an EVM
// address in live mode; invalid_request naming payer.
func payer(s tenant.Scope, p string) (string, error) {
	if s.Mode == tenant.Test {
		return rail.CheckTestPayer(p)
	}
	p = strings.ToLower(strings.TrimSpace(p))
	if len(p) != 42 || !strings.HasPrefix(p, "0x") || strings.Trim(p[2:], "0123456789abcdef") != "" {
		return "", apperr.Field("payer", "must be a wallet address (0x and 40 hex digits)")
	}
	return p, nil
}

func failed(st rail.Settlement) error {
	return apperr.New(apperr.PaymentFailed, "payment failed: %s", st.Reason)
}

// PayInvoice pays the open invoice with id (any merchant: checkout links
// are public and ids unguessable) from the payer's wallet, and records the
// payment, the invoice paid and invoice.paid in one transaction. Paying an
// invoice the same payer already paid returns that payment; an invoice paid
// by someone else, or void, is invoice_not_open (409). Fails with
// resource_not_found, invalid_request (payer), payment_failed (402, naming
// the rail's reason).
func (e Env) PayInvoice(ctx context.Context, invoiceID string, in Input) (payments.Payment, invoices.Invoice, error) {
	if !validText(invoiceID) {
		return payments.Payment{}, invoices.Invoice{}, apperr.New(apperr.ResourceNotFound, "no such invoice")
	}
	inv, ok, err := invoices.Get(ctx, e.DB, invoiceID)
	if err != nil {
		return payments.Payment{}, invoices.Invoice{}, err
	}
	if !ok {
		return payments.Payment{}, invoices.Invoice{}, apperr.New(apperr.ResourceNotFound, "no invoice %q", invoiceID)
	}
	s := inv.Scope()
	who, err := payer(s, in.Payer)
	if err != nil {
		return payments.Payment{}, inv, err
	}
	if inv.Status == invoices.StatusVoid {
		return payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is void", inv.ID)
	}
	rl, err := e.railFor(s)
	if err != nil {
		return payments.Payment{}, inv, err
	}
	payee, err := e.payeeOf(ctx, s, inv.Payee)
	if err != nil {
		return payments.Payment{}, inv, err
	}
	// An invoice is paid at most once (the rail refuses a second payment
	// of one invoice and answers the first): ask, then record.
	st, err := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Pay, Key: "pay:" + inv.ID + ":" + who, Nonce: inv.ID,
		Payer: who, Payee: payee, Amount: inv.Amount, At: e.Now(s)})
	if err != nil {
		return payments.Payment{}, inv, err
	}
	if st.Status == rail.Failed {
		return payments.Payment{}, inv, failed(st)
	}
	if st.Payer != who {
		return payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid", inv.ID)
	}
	var paid invoices.Invoice
	p, err := store.InTx(ctx, e.DB, func(tx *store.Tx) (payments.Payment, error) {
		var err error
		var pay payments.Payment
		pay, paid, err = e.recordInvoicePayment(ctx, tx, inv.ID, st)
		return pay, err
	})
	if apperr.CodeOf(err) == apperr.InvoiceNotOpen && paid.Status == invoices.StatusVoid {
		// Voided while the rail settled: the money goes back.
		if _, rerr := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Refund, Key: "void:" + st.Key, Nonce: st.Key,
			Payer: st.Payee, Payee: st.Payer, Amount: st.Amount, At: e.Now(s)}); rerr != nil {
			return payments.Payment{}, paid, rerr
		}
	}
	return p, paid, err
}

// recordInvoicePayment records a succeeded settlement of the invoice, once.
func (e Env) recordInvoicePayment(ctx context.Context, tx *store.Tx, invoiceID string, st rail.Settlement) (payments.Payment, invoices.Invoice, error) {
	inv, ok, err := invoices.Lock(ctx, tx, invoiceID)
	if err != nil || !ok {
		return payments.Payment{}, inv, err
	}
	s := inv.Scope()
	if inv.Status == invoices.StatusPaid {
		if p, ok, err := payments.BySettlement(ctx, tx, s, st.Key); err != nil || ok {
			return p, inv, err
		}
		return payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is paid", inv.ID)
	}
	if inv.Status != invoices.StatusOpen {
		return payments.Payment{}, inv, apperr.New(apperr.InvoiceNotOpen, "invoice %s is %s", inv.ID, inv.Status)
	}
	p := payments.FromSettlement(s, st)
	p.InvoiceID = &inv.ID
	p, _, err = payments.Insert(ctx, tx, p)
	if err != nil {
		return payments.Payment{}, inv, err
	}
	if inv, err = invoices.MarkPaid(ctx, tx, inv, p.ID, st.At); err != nil {
		return payments.Payment{}, inv, err
	}
	_, err = events.Emit(ctx, tx, s, events.InvoicePaid, st.At, inv.Wire(e.BaseURL))
	return p, inv, err
}

func (e Env) payeeOf(ctx context.Context, s tenant.Scope, snapshot *string) (string, error) {
	if snapshot != nil {
		return *snapshot, nil
	}
	return e.Payee(ctx, s)
}

// Subscribe subscribes a customer (by external id, default the payer) to
// the plan with id (any merchant) from the payer's wallet: the rail
// activates the authorization (with the first period's charge for a
// licensed plan), then the subscription, its first payment,
// subscription.active and the plan's entitlements are recorded in one
// transaction. Fails with resource_not_found, invalid_request,
// payment_failed (402) or already_subscribed (409: the customer has a live
// subscription to the plan).
func (e Env) Subscribe(ctx context.Context, planID string, in Input) (subscriptions.Subscription, error) {
	if !validText(planID) {
		return subscriptions.Subscription{}, apperr.New(apperr.ResourceNotFound, "no such plan")
	}
	p, ok, err := plans.Get(ctx, e.DB, planID)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	if !ok {
		return subscriptions.Subscription{}, apperr.New(apperr.ResourceNotFound, "no plan %q", planID)
	}
	s := p.Scope()
	who, err := payer(s, in.Payer)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	rl, err := e.railFor(s)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	ext := who
	if in.ExternalCustomerID != nil && *in.ExternalCustomerID != "" {
		ext = *in.ExternalCustomerID
	}
	c, err := customers.Upsert(ctx, e.DB, s, ext)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	if _, live, err := subscriptions.LiveFor(ctx, e.DB, p, c.ID); err != nil || live {
		if err == nil {
			err = apperr.New(apperr.AlreadySubscribed, "customer %s already has a live subscription to %s", c.ID, p.ID)
		}
		return subscriptions.Subscription{}, err
	}
	n, err := subscriptions.ActivationIndex(ctx, e.DB, p, c.ID)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	payee, err := e.Payee(ctx, s)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	first := p.Amount
	if p.UsageType == plans.Metered {
		first = 0 // a metered plan only authorizes at checkout
	}
	key := fmt.Sprintf("act:%s:%s:%s:%d", p.ID, c.ID, who, n)
	now := e.Now(s)
	st, err := rail.SettleOne(ctx, rl, rail.Request{Scope: s, Kind: rail.Activate, Key: key, Nonce: key, Payer: who, Payee: payee, Amount: first, At: now})
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	if st.Status == rail.Failed {
		return subscriptions.Subscription{}, failed(st)
	}
	return store.InTx(ctx, e.DB, func(tx *store.Tx) (subscriptions.Subscription, error) {
		x, _, err := subscriptions.ActivateTx(ctx, tx, subscriptions.ActivateInput{Plan: p, CustomerID: c.ID, Payer: who,
			Activation: st, UsageGrace: e.UsageGrace, Now: st.At})
		return x, err
	})
}

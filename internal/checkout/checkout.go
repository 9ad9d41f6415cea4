// Package checkout is what happens when a customer pays at a checkout_url:
// an invoice is paid (PayInvoice) or a plan is subscribed to (Subscribe);
// and what the hosted page shows (LoadInvoicePage, LoadPlanPage).
//
// Every settlement is made under a key derived from what is being paid, so
// asking again (a double submit, a retry after a crash) gets the same
// settlement and never charges twice. A rail whose ledger is in this
// database (rail.Local: test mode) settles in the same transaction that
// records the outcome and its event (the common case, an open invoice or a
// plan the test rail settles, in one statement shared with the concurrent
// ones: invoice_fast.go, subscribe_fast.go, group.go); another rail is asked
// first, then the outcome is recorded in one transaction; a rail that
// answers pending (the live rail awaiting confirmations) has its outcome
// recorded later, by its settlement worker (RecordInvoicePayment,
// RecordActivation).
//
// Checkout decides and orchestrates; it writes no table of its own. A
// plan's activation is written by the subscriptions package's one
// statement (subscriptions.Activations under load, ActivateTx in a locked
// checkout's transaction: a batch of one of the same statement), an open
// invoice's payment by the payments package's (payments.InvoicePayments).
package checkout

import (
	"context"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// Env is what checkout needs beyond the request.
type Env struct {
	DB *store.DB
	// Rail is the rail of a mode; ok=false when it has none (live mode
	// without a chain): paying then fails with payment_failed.
	Rail func(tenant.Mode) (rail.Rail, bool)
	// Clock is the wall clock; a test-mode merchant's time runs ahead of
	// it by its test clock.
	Clock func() time.Time
	// UsageGrace delays a metered period's rating past its end.
	UsageGrace time.Duration
	// BaseURL prefixes checkout links in the objects events carry.
	BaseURL string
	// Writers batches the common case's writes (NewWriters); nil pays
	// everything on the locked path.
	Writers *Writers
	// Only, when set, is the one mode this server serves (serve
	// --environment): a checkout of the other mode's invoice or plan is
	// refused with mode_mismatch, as API creates with the other mode's
	// key are.
	Only tenant.Mode
}

// checkMode refuses a checkout of an invoice or plan of the mode this
// server does not serve (mode_mismatch). It reads only when the server
// serves one mode; an unknown id is left to the checkout (not found).
func (e Env) checkMode(ctx context.Context, id string) error {
	if e.Only == "" {
		return nil
	}
	var modes []tenant.Mode
	err := e.DB.SelectContext(ctx, &modes, `SELECT mode FROM invoices WHERE id = $1 UNION ALL SELECT mode FROM plans WHERE id = $1`, id)
	if err != nil {
		return store.Translate(err)
	}
	if len(modes) > 0 && modes[0] != e.Only {
		return apperr.New(apperr.ModeMismatch, "this server accepts %s-mode requests only, but this checkout is a %s-mode one", e.Only, modes[0])
	}
	return nil
}

// Input is a POST /checkout/{id}/pay request: the payer's wallet and, for
// plans, the merchant's id for the customer (default: the payer address in
// lower case).
type Input struct {
	Payer              string
	ExternalCustomerID *string
	// Coupon is a coupon's code (or id) the customer redeems with a
	// plan's checkout; nil for none.
	Coupon *string
	// Payload is what a live rail needs beyond the payer: the payer's
	// signed authorization (see rail.Request.Payload). A payload that is a
	// SubscriptionPayload is told which subscription it pays for.
	Payload any
}

// SubscriptionPayload is a rail payload that records the subscription it
// activates (the live rail creates it once the activation is confirmed):
// its plan, its customer and the coupon redeemed with it ("" for none).
type SubscriptionPayload interface {
	ForSubscription(planID, customerID, couponID string) any
}

// Decode reads a pay form's fields (payer, external_customer_id, coupon) from a
// JSON object (the daemon turns the form into one).
func Decode(o *fields.Object) (Input, error) {
	in := Input{Payer: o.RequiredString("payer", 0, 0), ExternalCustomerID: o.String("external_customer_id", 0, 0),
		Coupon: o.String("coupon", 0, 0)}
	if err := o.Err(); err != nil {
		return in, err
	}
	// A form field is not checked by the JSON decoder: refuse what the
	// database could not store rather than fail on it.
	if problem := fields.TextProblem(in.Payer); problem != "" {
		return in, apperr.Field("payer", "%s", problem)
	}
	if in.ExternalCustomerID != nil {
		if problem := fields.TextProblem(*in.ExternalCustomerID); problem != "" {
			return in, apperr.Field("external_customer_id", "%s", problem)
		}
	}
	if in.Coupon != nil {
		if problem := fields.TextProblem(*in.Coupon); problem != "" {
			return in, apperr.Field("coupon", "%s", problem)
		}
		if *in.Coupon == "" {
			in.Coupon = nil // an empty form field: no coupon
		}
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

// terms are the payee and the time of an operation of s: the payee
// snapshotted on the object when it was created, else the wallet on file
// (wallet.PayeeOf), and the wall clock moved by a test-mode merchant's test
// clock. The wallet and the clock are read in one statement: the pay path
// runs many statements to a request, and each costs a round trip.
func (e Env) terms(ctx context.Context, q store.Querier, s tenant.Scope, snapshot *string) (payee string, now time.Time, err error) {
	var row struct {
		Wallet  *string `db:"wallet"`
		AheadUS *int64  `db:"ahead_us"`
	}
	err = q.GetContext(ctx, &row, `SELECT
			(SELECT address FROM settlement_wallets WHERE merchant_id = $1 AND mode = $2 AND replaced_at IS NULL) AS wallet,
			(SELECT ahead_us FROM test_clocks WHERE merchant_id = $1) AS ahead_us`, s.MerchantID, s.Mode)
	if err != nil {
		return "", time.Time{}, store.Translate(err)
	}
	return e.termsOf(s, snapshot, row.Wallet, row.AheadUS)
}

// termsOf is terms from the wallet on file and the test clock's offset,
// read by the caller (the pay path reads them with what it pays).
func (e Env) termsOf(s tenant.Scope, snapshot, onFile *string, aheadUS *int64) (payee string, now time.Time, err error) {
	if snapshot != nil {
		payee = *snapshot
	} else if payee, err = wallet.PayeeOf(s, onFile); err != nil {
		return "", time.Time{}, err
	}
	now = e.Clock()
	if s.Mode == tenant.Test && aheadUS != nil {
		now = now.Add(time.Duration(*aheadUS) * time.Microsecond)
	}
	return payee, now, nil
}

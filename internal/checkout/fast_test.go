package checkout

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

type fixture struct {
	ctx context.Context
	db  *store.DB
	env Env
	s   tenant.Scope
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "checkout")
	if err != nil {
		t.Fatal(err)
	}
	r := rail.NewTest(db)
	env := Env{DB: db, Clock: time.Now, BaseURL: "http://pay.test", Writers: NewWriters(db),
		Rail: func(mode tenant.Mode) (rail.Rail, bool) { return r, mode == tenant.Test }}
	return &fixture{ctx: ctx, db: db, env: env, s: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}}
}

func (f *fixture) invoice(t *testing.T) invoices.Invoice {
	t.Helper()
	inv, err := invoices.Create(f.ctx, f.db, f.s, invoices.Input{Amount: 7000000, Description: "fast"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// eventData returns the data of the scope's only event of type typ.
func (f *fixture) eventData(t *testing.T, typ string) json.RawMessage {
	t.Helper()
	var data []string
	if err := f.db.SelectContext(f.ctx, &data, `SELECT data::text FROM events WHERE merchant_id = $1 AND type = $2`, f.s.MerchantID, typ); err != nil {
		t.Fatal(err)
	}
	if len(data) != 1 {
		t.Fatalf("%d %s events", len(data), typ)
	}
	return json.RawMessage(data[0])
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("\n%s\n%s", a, b)
	}
}

// An open invoice paid with a wallet the test rail accepts takes the two
// statements, and records what the locked path records: the settlement,
// the payment, the invoice paid, invoice.paid with the invoice's wire form.
// Anything else is left to the locked path, nothing written.
func TestPayInvoiceFast(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoice(t)
	for _, payer := range []string{rail.WalletInsufficient, "0x1111111111111111111111111111111111111111"} {
		if _, _, _, done, err := f.env.payInvoiceFast(f.ctx, inv.ID, Input{Payer: payer}); done || err != nil {
			t.Fatalf("%s: done %v, %v", payer, done, err)
		}
	}
	st, p, paid, done, err := f.env.payInvoiceFast(f.ctx, inv.ID, Input{Payer: rail.WalletTransientOnce})
	if !done || err != nil {
		t.Fatalf("done %v, %v", done, err)
	}
	got, err := invoices.ByID(f.ctx, f.db, f.s, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != invoices.StatusPaid || *got.PaymentID != p.ID || !got.PaidAt.Equal(st.At) || p.SettlementKey == nil || *p.SettlementKey != st.Key {
		t.Fatalf("invoice %+v payment %+v", got, p)
	}
	want, _ := json.Marshal(got.Wire(f.env.BaseURL))
	sameJSON(t, f.eventData(t, "invoice.paid"), want)
	mine, _ := json.Marshal(paid.Wire(f.env.BaseURL))
	sameJSON(t, mine, want)
	// A double submit and a second payer go the locked way, which answers
	// them (the same payment; invoice_not_open).
	if _, _, _, done, _ := f.env.payInvoiceFast(f.ctx, inv.ID, Input{Payer: rail.WalletTransientOnce}); done {
		t.Fatal("a paid invoice took the fast path")
	}
	again, _, err := f.env.PayInvoice(f.ctx, inv.ID, Input{Payer: rail.WalletTransientOnce})
	if err != nil || again.ID != p.ID {
		t.Fatalf("double submit: %v %v", again.ID, err)
	}
	if _, _, err := f.env.PayInvoice(f.ctx, inv.ID, Input{Payer: rail.WalletSucceeds}); apperr.CodeOf(err) != apperr.InvoiceNotOpen {
		t.Fatalf("second payer: %v", err)
	}
}

// A settlement the ledger already has for the invoice (another payer's,
// made outside a transaction and not recorded yet) fails the whole
// statement: nothing is written, and the locked path answers
// invoice_not_open.
func TestPayInvoiceFastLedgerFirst(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoice(t)
	r := rail.NewTest(f.db)
	if _, err := r.Settle(f.ctx, []rail.Request{{Scope: f.s, Kind: rail.Pay, Key: "pay:" + inv.ID + ":" + rail.WalletRevokesAfter1st, Nonce: inv.ID,
		Payer: rail.WalletRevokesAfter1st, Payee: "0x1", Amount: inv.Amount, At: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, done, err := f.env.payInvoiceFast(f.ctx, inv.ID, Input{Payer: rail.WalletSucceeds}); done || err != nil {
		t.Fatalf("done %v, %v", done, err)
	}
	got, err := invoices.ByID(f.ctx, f.db, f.s, inv.ID)
	if err != nil || got.Status != invoices.StatusOpen {
		t.Fatalf("invoice %+v %v", got, err)
	}
	var n int
	if err := f.db.GetContext(f.ctx, &n, `SELECT (SELECT count(*) FROM payments) + (SELECT count(*) FROM events)`); err != nil || n != 0 {
		t.Fatalf("%d rows written, %v", n, err)
	}
	if _, _, err := f.env.PayInvoice(f.ctx, inv.ID, Input{Payer: rail.WalletSucceeds}); apperr.CodeOf(err) != apperr.InvoiceNotOpen {
		t.Fatalf("pay: %v", err)
	}
}

// A plan checkout of a new customer, and of a known one, takes the two
// statements and records the subscription, its first payment and
// subscription.active with the subscription's wire form; a second checkout
// of the same customer goes the locked way (already_subscribed).
func TestSubscribeFast(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p, err := plans.Create(f.ctx, f.db, f.s, plans.Input{Name: "Weekly", Amount: 2000000, Interval: "week"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ext := "u_1"
	st, x, done, err := f.env.subscribeFast(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext})
	if !done || err != nil {
		t.Fatalf("done %v, %v", done, err)
	}
	got, err := subscriptions.Get(f.ctx, f.db, f.s, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(got.Wire())
	sameJSON(t, f.eventData(t, "subscription.active"), want)
	var pay struct {
		Key    string `db:"settlement_key"`
		Amount string `db:"amount"`
	}
	if err := f.db.GetContext(f.ctx, &pay, `SELECT settlement_key, amount::text AS amount FROM payments WHERE id = $1`, *got.LatestPaymentID); err != nil ||
		pay.Key != st.Key || pay.Amount != "2000000" || *got.AuthorizationKey != st.Key {
		t.Fatalf("payment %+v %v", pay, err)
	}
	if _, _, done, err := f.env.subscribeFast(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext}); done || err != nil {
		t.Fatalf("second checkout: done %v, %v", done, err)
	}
	if _, err := f.env.Subscribe(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext}); apperr.CodeOf(err) != apperr.AlreadySubscribed {
		t.Fatalf("second checkout: %v", err)
	}
	// A known customer without a live subscription: its second one.
	if _, err := f.db.ExecContext(f.ctx, `UPDATE subscriptions SET status = 'canceled' WHERE id = $1`, x.ID); err != nil {
		t.Fatal(err)
	}
	st2, x2, done, err := f.env.subscribeFast(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext})
	if !done || err != nil || *x2.CustomerID != *x.CustomerID || st2.Key == st.Key {
		t.Fatalf("resubscription: done %v, %v, %v %v", done, err, st2.Key, st.Key)
	}
	var settled int
	if err := f.db.GetContext(f.ctx, &settled, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1`, f.s.MerchantID); err != nil || settled != 2 {
		t.Fatalf("%d settlements, %v", settled, err)
	}
}

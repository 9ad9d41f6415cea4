package checkout

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

func (f *fixture) plan(t *testing.T) plans.Plan {
	t.Helper()
	p, err := plans.Create(f.ctx, f.db, f.s, plans.Input{Name: "Weekly", Amount: 2000000, Interval: "week"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) prepared(t *testing.T, planID, ext string) *batch.Call[subscriptions.Activation, subscriptions.Activated] {
	t.Helper()
	w, ok, err := f.env.prepareActivation(f.ctx, planID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext}, false)
	if !ok || err != nil {
		t.Fatalf("prepare %s: %v %v", ext, ok, err)
	}
	return &batch.Call[subscriptions.Activation, subscriptions.Activated]{In: w}
}

func (f *fixture) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := f.db.GetContext(f.ctx, &n, `SELECT count(*) FROM `+table+` WHERE merchant_id = $1`, f.s.MerchantID); err != nil {
		t.Fatal(err)
	}
	return n
}

// A batch writes each checkout as it would be written alone: two checkouts
// of one new customer in a batch make one subscription, and the other
// writes nothing (the locked path answers it).
func TestActivationBatch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := f.plan(t)
	calls := []*batch.Call[subscriptions.Activation, subscriptions.Activated]{f.prepared(t, p.ID, "u_a"), f.prepared(t, p.ID, "u_b"), f.prepared(t, p.ID, "u_a")}
	if err := subscriptions.WriteActivations(f.ctx, f.db, calls); err != nil {
		t.Fatal(err)
	}
	if !calls[0].Out.OK || !calls[1].Out.OK || calls[2].Out.OK {
		t.Fatalf("outcomes %+v %+v %+v", calls[0].Out, calls[1].Out, calls[2].Out)
	}
	for table, want := range map[string]int{"customers": 2, "subscriptions": 2, "rail_settlements": 2, "payments": 2, "events": 2} {
		if n := f.count(t, table); n != want {
			t.Fatalf("%d %s, want %d", n, table, want)
		}
	}
	if *calls[0].Out.Sub.CustomerID != *calls[0].In.Sub.CustomerID || calls[0].Out.Sub.ID != calls[0].In.Sub.ID {
		t.Fatalf("subscription %+v", calls[0].Out.Sub)
	}
	if _, err := f.env.Subscribe(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: ptr("u_a")}); apperr.CodeOf(err) != apperr.AlreadySubscribed {
		t.Fatalf("u_a again: %v", err)
	}
}

// A batch whose statement fails (a settlement already in the ledger) is
// written one by one: the others are written.
func TestActivationBatchFallsBackOneByOne(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := f.plan(t)
	calls := []*batch.Call[subscriptions.Activation, subscriptions.Activated]{f.prepared(t, p.ID, "u_c"), f.prepared(t, p.ID, "u_d")}
	st := calls[0].In.Settlement
	if _, err := rail.NewTest(f.db).Settle(f.ctx, []rail.Request{{Scope: f.s, Kind: rail.Activate, Key: st.Key, Nonce: st.Key,
		Payer: st.Payer, Payee: st.Payee, Amount: st.Amount, At: st.At}}); err != nil {
		t.Fatal(err)
	}
	subscriptions.RunActivations(f.db, calls)
	if calls[0].Out.OK || calls[0].Out.Err != nil || !calls[1].Out.OK {
		t.Fatalf("outcomes %+v %+v", calls[0].Out, calls[1].Out)
	}
	if n := f.count(t, "subscriptions"); n != 1 {
		t.Fatalf("%d subscriptions", n)
	}
}

// Concurrent checkouts go through the group commit: distinct customers all
// subscribe; one customer racing with itself subscribes once, the others
// are already_subscribed.
func TestConcurrentCheckouts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := f.plan(t)
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for i := range 60 {
		ext := "u_" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.env.Subscribe(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext})
			errs <- err
		}()
	}
	wg.Wait()
	for range 60 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.env.Subscribe(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: ptr("same")})
			errs <- err
		}()
	}
	wg.Wait()
	won := 0
	for range 20 {
		switch err := <-errs; {
		case err == nil:
			won++
		case apperr.CodeOf(err) != apperr.AlreadySubscribed:
			t.Fatal(err)
		}
	}
	if won != 1 || f.count(t, "subscriptions") != 61 || f.count(t, "rail_settlements") != 61 || f.count(t, "events") != 61 {
		t.Fatalf("won %d, %d subscriptions", won, f.count(t, "subscriptions"))
	}
}

func ptr(s string) *string { return &s }

// A batch of payments pays each invoice once: two payers of one invoice in
// a batch, one is written and the other writes nothing (the locked path
// answers invoice_not_open); invoice.paid carries the invoice's wire form.
func TestPayBatch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, b := f.invoice(t), f.invoice(t)
	prep := func(id, payer string) *batch.Call[payments.InvoicePayment, payments.InvoicePaid] {
		w, ok, err := f.env.preparePay(f.ctx, id, Input{Payer: payer})
		if !ok || err != nil {
			t.Fatalf("prepare: %v %v", ok, err)
		}
		return &batch.Call[payments.InvoicePayment, payments.InvoicePaid]{In: w}
	}
	calls := []*batch.Call[payments.InvoicePayment, payments.InvoicePaid]{prep(a.ID, rail.WalletSucceeds), prep(b.ID, rail.WalletSucceeds), prep(a.ID, rail.WalletTransientOnce)}
	if payments.WriteInvoicePayments(f.ctx, f.db, calls) != nil {
		t.Fatal("the batch failed")
	}
	if !calls[0].Out.OK || !calls[1].Out.OK || calls[2].Out.OK {
		t.Fatalf("outcomes %+v %+v %+v", calls[0].Out, calls[1].Out, calls[2].Out)
	}
	for table, want := range map[string]int{"rail_settlements": 2, "payments": 2, "events": 2} {
		if n := f.count(t, table); n != want {
			t.Fatalf("%d %s, want %d", n, table, want)
		}
	}
	got, err := invoices.ByID(f.ctx, f.db, f.s, a.ID)
	if err != nil || got.Status != invoices.StatusPaid || *got.PaymentID != calls[0].Out.Payment.ID {
		t.Fatalf("invoice %+v %v", got, err)
	}
	mine, _ := json.Marshal(calls[0].In.Paid.Wire(f.env.BaseURL))
	want, _ := json.Marshal(got.Wire(f.env.BaseURL))
	sameJSON(t, mine, want)
	if _, _, err := f.env.PayInvoice(f.ctx, a.ID, Input{Payer: rail.WalletTransientOnce}); apperr.CodeOf(err) != apperr.InvoiceNotOpen {
		t.Fatalf("second payer: %v", err)
	}
}

// Many concurrent payments go through the group commit: each is paid once.
func TestConcurrentPays(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var ids []string
	for range 50 {
		ids = append(ids, f.invoice(t).ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payer := rail.WalletSucceeds
			if i >= 50 {
				payer = rail.WalletTransientOnce
			}
			_, _, err := f.env.PayInvoice(f.ctx, ids[i%50], Input{Payer: payer})
			errs <- err
		}()
	}
	wg.Wait()
	won := 0
	for range 100 {
		switch err := <-errs; {
		case err == nil:
			won++
		case apperr.CodeOf(err) != apperr.InvoiceNotOpen:
			t.Fatal(err)
		}
	}
	if won != 50 || f.count(t, "payments") != 50 || f.count(t, "events") != 50 {
		t.Fatalf("won %d, %d payments", won, f.count(t, "payments"))
	}
}

// A checkout of a cached plan reads nothing and guesses a new customer and
// the terms last read; a known customer, or a test clock moved since, makes
// the write refuse the guess, and the checkout reads and writes again.
func TestActivationGuess(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := f.plan(t)
	subscribe := func(ext string) time.Time {
		t.Helper()
		_, x, done, err := f.env.subscribeFast(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &ext})
		if !done || err != nil {
			t.Fatalf("%s: done %v, %v", ext, done, err)
		}
		return x.CreatedAt
	}
	subscribe("u_1") // read: the plan is cached
	w, ok, err := f.env.prepareActivation(f.ctx, p.ID, Input{Payer: rail.WalletSucceeds, ExternalCustomerID: ptr("u_2")}, true)
	if !ok || err != nil || !w.Guess {
		t.Fatalf("guess %v %v %v", w.Guess, ok, err)
	}
	subscribe("u_2")
	// A known customer without a live subscription: the guess (new) is
	// refused, the read finds it.
	if _, err := f.db.ExecContext(f.ctx, `UPDATE subscriptions SET status = 'canceled' WHERE merchant_id = $1`, f.s.MerchantID); err != nil {
		t.Fatal(err)
	}
	subscribe("u_1")
	if n := f.count(t, "customers"); n != 2 {
		t.Fatalf("%d customers", n)
	}
	// The clock moved a day: the guess made with the cached offset is
	// refused, and the subscription starts by the new time.
	if _, err := f.db.ExecContext(f.ctx, `INSERT INTO test_clocks (merchant_id, ahead_us) VALUES ($1, $2)`, f.s.MerchantID, int64(24*time.Hour/time.Microsecond)); err != nil {
		t.Fatal(err)
	}
	if at := subscribe("u_3"); at.Before(time.Now().Add(23 * time.Hour)) {
		t.Fatalf("created at %s, by the old clock", at)
	}
	if n, m := f.count(t, "subscriptions"), f.count(t, "rail_settlements"); n != 4 || m != 4 {
		t.Fatalf("%d subscriptions, %d settlements", n, m)
	}
}

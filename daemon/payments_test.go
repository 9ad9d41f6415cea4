package daemon_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

func TestInvoicePaidOnceWithMagicWallets(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "9000000", Description: "Pro plan"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletInsufficient})
	apiErr(t, err, 402, "payment_failed")
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: "0x1111111111111111111111111111111111111111"})
	apiErr(t, err, 400, "invalid_request")
	res, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletTransientOnce})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Payment
	if p.Status != "succeeded" || p.Amount != "9000000" || p.InvoiceID == nil || *p.InvoiceID != inv.ID || p.TxHash == nil {
		t.Fatalf("payment %s", p.Raw)
	}
	again, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletTransientOnce})
	if err != nil || again.Payment.ID != p.ID {
		t.Fatalf("double submit: %v %v", again, err)
	}
	_, err = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	apiErr(t, err, 409, "invoice_not_open")
	got, err := f.c.GetInvoice(f.ctx, inv.ID)
	if err != nil || got.Status != "paid" || got.PaymentID == nil || *got.PaymentID != p.ID {
		t.Fatalf("invoice after payment: %v %v", got, err)
	}
	if _, err := f.c.VoidInvoice(f.ctx, inv.ID); err == nil {
		t.Fatal("a paid invoice was voided")
	}
	if n := count(f.eventTypes(), "invoice.paid"); n != 1 {
		t.Fatalf("%d invoice.paid events", n)
	}
	list, err := f.c.ListPayments(f.ctx, client.ListParams{})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("payments: %v %v", list, err)
	}
	_, err = f.c.Pay(f.ctx, "inv_nope", client.CheckoutParams{Payer: rail.WalletSucceeds})
	apiErr(t, err, 404, "resource_not_found")
}

// Payers racing for one invoice: one wins, the others get 409, one payment.
func TestInvoiceConcurrentPayers(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "5000000", Description: "Race"})
	if err != nil {
		t.Fatal(err)
	}
	payers := []string{rail.WalletSucceeds, rail.WalletTransientOnce, rail.WalletRevokesAfter1st, rail.WalletFailsTwiceAfter1}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, conflicts := 0, 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: payers[i%len(payers)]})
			mu.Lock()
			defer mu.Unlock()
			var e *client.Error
			switch {
			case err == nil:
				won++
			case asErr(err, &e) && e.Code == "invoice_not_open":
				conflicts++
			default:
				t.Errorf("pay: %v", err)
			}
		}()
	}
	wg.Wait()
	list, err := f.c.ListPayments(f.ctx, client.ListParams{})
	if err != nil || len(list.Data) != 1 || won < 1 || won+conflicts != 12 {
		t.Fatalf("payments %d, won %d, conflicts %d (%v)", len(list.Data), won, conflicts, err)
	}
	if n := count(f.eventTypes(), "invoice.paid"); n != 1 {
		t.Fatalf("%d invoice.paid events", n)
	}
}

func TestLicensedSubscriptionRenews(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	if x.Status != "active" || x.LatestPaymentID == nil || x.CurrentPeriodEnd.Sub(*x.CurrentPeriodStart) != 7*24*time.Hour {
		t.Fatalf("subscription %s", x.Raw)
	}
	_, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1"})
	apiErr(t, err, 409, "already_subscribed")
	f.advance("15d")
	x2 := f.sub(x.ID)
	if x2.Status != "active" || !x2.CurrentPeriodStart.Equal(x.CurrentPeriodStart.Add(14*24*time.Hour)) {
		t.Fatalf("after 15 days: %s", x2.Raw)
	}
	types := f.eventTypes()
	if count(types, "subscription.active") != 1 || count(types, "subscription.renewed") != 2 {
		t.Fatalf("events %v", types)
	}
	pays, _ := f.c.ListPayments(f.ctx, client.ListParams{})
	if len(pays.Data) != 3 {
		t.Fatalf("%d payments, want 3", len(pays.Data))
	}
	// Renewals pay the wallet the first payment paid: the merchant's.
	payee := func(p client.Payment) string {
		if p.Payee == nil {
			return ""
		}
		return *p.Payee
	}
	first := payee(pays.Data[len(pays.Data)-1])
	for _, pay := range pays.Data {
		if first == "" || payee(pay) != first {
			t.Fatalf("payment %s pays %q; the first paid %q", pay.ID, payee(pay), first)
		}
	}
	clock, err := f.c.GetTestClock(f.ctx)
	if err != nil || clock.Now.Before(time.Now().Add(15*24*time.Hour-time.Minute)) {
		t.Fatalf("clock %v %v", clock, err)
	}
}

func TestDunningRecoversAndRevocation(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	recovers := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_recovers")
	revokes := f.subscribe(p.ID, rail.WalletRevokesAfter1st, "u_revokes")
	_, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletInsufficient, ExternalCustomerID: "u_poor"})
	apiErr(t, err, 402, "payment_failed")
	f.advance("7d1h")
	if x := f.sub(recovers.ID); x.Status != "past_due" {
		t.Fatalf("after the failed renewal: %s", x.Raw)
	}
	if x := f.sub(revokes.ID); x.Status != "revoked" || x.EndedAt == nil {
		t.Fatalf("revoked wallet: %s", x.Raw)
	}
	f.advance("1d") // first retry fails
	if x := f.sub(recovers.ID); x.Status != "past_due" {
		t.Fatalf("after the first retry: %s", x.Raw)
	}
	f.advance("2d") // second retry succeeds
	if x := f.sub(recovers.ID); x.Status != "active" {
		t.Fatalf("after the second retry: %s", x.Raw)
	}
	types := f.eventTypes()
	if count(types, "subscription.payment_failed") != 1 || count(types, "subscription.revoked") != 1 || count(types, "subscription.renewed") != 1 {
		t.Fatalf("events %v", types)
	}
}

func TestDunningExhausted(t *testing.T) {
	t.Parallel()
	f := setupMoney(t, func(c *daemon.Config) { c.DunningSchedule = []time.Duration{24 * time.Hour} })
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_1")
	f.advance("9d")
	got := f.sub(x.ID)
	if got.Status != "canceled" || got.EndedAt == nil {
		t.Fatalf("after dunning: %s", got.Raw)
	}
	if types := f.eventTypes(); count(types, "subscription.dunning_exhausted") != 1 {
		t.Fatalf("events %v", types)
	}
}

func TestMeteredSubscriptionIsRated(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	meter, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "sum"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Usage", Amount: "3000000", Interval: "week", UsageType: "metered", Meter: meter.ID,
		PricingModel: json.RawMessage(`{"kind":"per_unit","unitAmount":1000,"includedUnits":100}`)})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
	if x.LatestPaymentID != nil {
		t.Fatalf("a metered checkout charged: %s", x.Raw)
	}
	for _, v := range []string{"600", "500"} {
		if _, err := f.c.SendMeterEvent(f.ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_1", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	up, err := f.c.UpcomingCharge(f.ctx, x.ID)
	if err != nil || up.Amount != "1000000" || up.Object != "upcoming_charge" || len(up.Lines) == 0 {
		t.Fatalf("upcoming: %+v %v", up, err)
	}
	f.advance("7d2h")
	got := f.sub(x.ID)
	if got.LatestPaymentID == nil {
		t.Fatalf("not charged: %s", got.Raw)
	}
	pay, err := f.c.GetPayment(f.ctx, *got.LatestPaymentID)
	if err != nil || pay.Amount != "1000000" || len(pay.Lines) == 0 || pay.PeriodStart == nil {
		t.Fatalf("payment %v %v", pay, err)
	}
}

func TestCancelSubscription(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Monthly", Amount: "2000000", Interval: "month"})
	a := f.subscribe(p.ID, rail.WalletSucceeds, "u_a")
	b := f.subscribe(p.ID, rail.WalletSucceeds, "u_b")
	// Twice: the second changes nothing and emits nothing.
	for range 2 {
		if x, err := f.c.CancelSubscription(f.ctx, a.ID, client.CancelParams{}); err != nil || x.CancelAt == nil || !x.CancelAt.Equal(*a.CurrentPeriodEnd) {
			t.Fatalf("cancel at period end: %v %v", x, err)
		}
	}
	if got := f.cancelAts(a.ID); !slices.Equal(got, []string{a.CurrentPeriodEnd.UTC().Format(time.RFC3339)}) {
		t.Fatalf("subscription.updated of the cancel at period end: cancel_at %v", got)
	}
	now := false
	if x, err := f.c.CancelSubscription(f.ctx, b.ID, client.CancelParams{AtPeriodEnd: &now}); err != nil || x.Status != "expired" {
		t.Fatalf("cancel now: %v %v", x, err)
	}
	_, err := f.c.CancelSubscription(f.ctx, b.ID, client.CancelParams{})
	apiErr(t, err, 400, "invalid_request")
	f.advance("32d")
	if x := f.sub(a.ID); x.Status != "expired" || x.EndedAt == nil || !x.EndedAt.Equal(*a.CurrentPeriodEnd) {
		t.Fatalf("after the period: %s", x.Raw)
	}
	if types := f.eventTypes(); count(types, "subscription.expired") != 2 || count(types, "subscription.renewed") != 0 {
		t.Fatalf("events %v", types)
	}
}

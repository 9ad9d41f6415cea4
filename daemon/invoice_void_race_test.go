package daemon_test

import (
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// Voids racing each other and a checkout payment each answer the state
// they left: 200 void, or 409 invoice_not_open when the payment won, and
// the invoice ends as the answers say.
func TestVoidRacingACheckoutPayment(t *testing.T) {
	t.Parallel()
	f := setupMoney(t, func(c *daemon.Config) { c.RateLimits = false })
	for trial := range 20 {
		inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "1000000", Description: "race"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		voids := make([]error, 2)
		voided := make([]*client.Invoice, 2)
		var payErr error
		wg.Add(3)
		for i := range voids {
			go func() {
				defer wg.Done()
				voided[i], voids[i] = f.c.VoidInvoice(f.ctx, inv.ID)
			}()
		}
		go func() {
			defer wg.Done()
			_, payErr = f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
		}()
		wg.Wait()
		final, err := f.c.GetInvoice(f.ctx, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, err := range voids {
			switch {
			case err == nil && voided[i].Status != "void":
				t.Fatalf("trial %d: a void answered 200 %q (payment: %v, final %s)", trial, voided[i].Status, payErr, final.Status)
			case err == nil && final.Status != "void":
				t.Fatalf("trial %d: a void answered void but the invoice is %s", trial, final.Status)
			case err != nil:
				apiErr(t, err, 409, "invoice_not_open")
				if final.Status != "paid" {
					t.Fatalf("trial %d: a void answered 409 but the invoice is %s", trial, final.Status)
				}
			}
		}
		if payErr == nil && final.Status != "paid" || payErr != nil && final.Status != "void" {
			t.Fatalf("trial %d: payment %v, invoice %s", trial, payErr, final.Status)
		}
	}
}

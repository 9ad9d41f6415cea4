package daemon_test

import (
	"fmt"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// A declined checkout of a plan creates no customer.
func TestDeclinedCheckoutCreatesNoCustomer(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	weekly := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	for i := range 5 {
		ext := fmt.Sprintf("u_declined_%d", i)
		_, err := f.c.Pay(f.ctx, weekly.ID, client.CheckoutParams{Payer: rail.WalletInsufficient, ExternalCustomerID: ext})
		apiErr(t, err, 402, "payment_failed")
		_, err = f.c.GetCustomer(f.ctx, ext)
		apiErr(t, err, 404, "unknown_customer")
	}
	// Without an external id the payer's address would be the customer's.
	_, err := f.c.Pay(f.ctx, weekly.ID, client.CheckoutParams{Payer: rail.WalletInsufficient})
	apiErr(t, err, 402, "payment_failed")
	var n int
	if err := f.db.GetContext(f.ctx, &n, `SELECT count(*) FROM customers WHERE merchant_id = $1`, f.m); err != nil || n != 0 {
		t.Fatalf("%d customers after declined checkouts (%v)", n, err)
	}
	// A successful one still makes its customer.
	f.subscribe(weekly.ID, rail.WalletSucceeds, "u_paid")
	if _, err := f.c.GetCustomer(f.ctx, "u_paid"); err != nil {
		t.Fatal(err)
	}
}

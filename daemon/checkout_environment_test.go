package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A live-only server (serve --environment live) refuses test-mode checkout
// payments with mode_mismatch, as it refuses creates with a test key; the
// invoice and the plan are left as they were.
func TestLiveOnlyServerRefusesTestCheckouts(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Environment = "live" })
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	c := b.client(key)
	ctx := context.Background()
	_, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1000000", Description: "test"})
	apiErr(t, err, 400, "mode_mismatch")

	// Test-mode objects made before the server was restricted.
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	inv, err := invoices.Create(ctx, b.db, s, invoices.Input{Amount: 1000000, Description: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p, err := plans.Create(ctx, b.db, s, plans.Input{Name: "Weekly", Amount: 1000000, Interval: "week"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{inv.ID, p.ID} {
		_, err := c.Pay(ctx, id, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1"})
		apiErr(t, err, 400, "mode_mismatch")
	}
	if got, err := invoices.ByID(ctx, b.db, s, inv.ID); err != nil || got.Status != invoices.StatusOpen {
		t.Fatalf("invoice after a refused checkout: %+v %v", got, err)
	}
	var subs int
	if err := b.db.GetContext(ctx, &subs, `SELECT count(*) FROM subscriptions WHERE merchant_id = $1`, m); err != nil || subs != 0 {
		t.Fatalf("%d subscriptions after a refused checkout (%v)", subs, err)
	}
}

package daemon_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A refund from a payment's page is shown for confirmation first, then
// made on the payment's rail; another merchant's session cannot see the
// payment or refund it.
func TestDashboardRefund(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	mA, mB := b.merchant("A"), b.merchant("B")
	_, key := b.key(mA, tenant.Test)
	c := b.client(key)
	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "10000000", Description: "Refund me"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Pay(ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		t.Fatal(err)
	}
	pay := res.Payment.ID
	b.dashUser(t, mA, "a@example.com")
	b.dashUser(t, mB, "b@example.com")

	brB := b.browser(t)
	brB.signIn("b@example.com")
	if a := brB.get("/dashboard/payments/" + pay); a.status != 404 {
		t.Fatalf("B reads A's payment: %d", a.status)
	}
	brB.get("/dashboard/payments")
	if a := brB.post("/dashboard/payments/"+pay+"/refund", url.Values{"confirm": {"yes"}}); a.status != 404 {
		t.Fatalf("B refunds A's payment: %d", a.status)
	}

	br := b.browser(t)
	br.signIn("a@example.com")
	if a := br.get("/dashboard/payments"); !strings.Contains(a.body, pay) {
		t.Fatal("the list lacks the payment")
	}
	br.get("/dashboard/payments/" + pay)
	a := br.post("/dashboard/payments/"+pay+"/refund", url.Values{"amount": {"2.5usdc"}, "reason": {"partial"}})
	if a.status != 200 || !strings.Contains(a.body, `id="refund-confirm"`) || !strings.Contains(a.body, "Refund 2.50 USDC?") {
		t.Fatalf("confirmation: %d\n%s", a.status, a.body)
	}
	if p, _ := c.GetPayment(ctx, pay); p.AmountRefunded != nil && *p.AmountRefunded != "0" {
		t.Fatal("refunded before confirmation")
	}
	if a = br.post("/dashboard/payments/"+pay+"/refund", url.Values{"amount": {"2.5usdc"}, "reason": {"partial"}, "confirm": {"yes"}}); a.status != http.StatusSeeOther {
		t.Fatalf("refund: %d\n%s", a.status, a.body)
	}
	a = br.get("/dashboard/payments/" + pay)
	if !strings.Contains(a.body, "partially_refunded") || !strings.Contains(a.body, "2.50 USDC") {
		t.Fatalf("payment after the refund:\n%s", a.body)
	}
	if a = br.post("/dashboard/payments/"+pay+"/refund", url.Values{"amount": {"9usdc"}}); a.status != 400 || !strings.Contains(a.body, "exceeds") {
		t.Fatalf("too much: %d", a.status)
	}
	p, err := c.GetPayment(ctx, pay)
	if err != nil || p.AmountRefunded == nil || *p.AmountRefunded != "2500000" {
		t.Fatalf("%+v %v", p, err)
	}
	if a = br.get("/dashboard/audit"); !strings.Contains(a.body, ">"+audit.RefundCreate+"<") || !strings.Contains(a.body, pay+": 2.50 USDC (partial)") {
		t.Fatal("the refund is not in the audit log")
	}
}

package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// A payment refunded in parts, never beyond what is left, each refund
// confirmed with refund.succeeded.
func TestAdminRefund(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	d := startEventsDaemon(t, db)
	merchant, key := merchantKey(t, db)
	c := client.New(d.URL, key, client.WithMaxRetries(0))
	ctx := context.Background()
	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "10000000", Description: "Refund me"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Pay(ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		t.Fatal(err)
	}
	pay := res.Payment.ID
	run := func(args ...string) (int, string, string) {
		out, errOut := &syncBuffer{}, &syncBuffer{}
		code := cli(t, ctx, out, errOut, append(append([]string{"admin", "refund"}, args...), "--database-url", url)...)
		return code, out.String(), errOut.String()
	}
	code, out, stderr := run(pay, "--amount", "2.5usdc", "--reason", "partial", "--json")
	var r struct {
		ID, Amount, Status string
		PaymentID          string `json:"payment_id"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Amount != "2500000" || r.Status != "succeeded" || !strings.HasPrefix(r.ID, "re_") || r.PaymentID != pay {
		t.Fatalf("partial refund: exit %d %s %s", code, out, stderr)
	}
	if code, _, stderr = run(pay, "--amount", "8usdc"); code == 0 || !strings.Contains(stderr, "exceeds") {
		t.Fatalf("refund beyond what is left: exit %d %s", code, stderr)
	}
	if code, out, stderr = run(pay); code != 0 || !strings.Contains(out, "7.50 USDC") {
		t.Fatalf("refund of the rest: exit %d %s %s", code, out, stderr)
	}
	if code, _, stderr = run(pay); code == 0 || !strings.Contains(stderr, "fully refunded") {
		t.Fatalf("refund of a refunded payment: exit %d %s", code, stderr)
	}
	p, err := c.GetPayment(ctx, pay)
	if err != nil || p.Status != "refunded" || p.AmountRefunded == nil || *p.AmountRefunded != "10000000" {
		t.Fatalf("payment after refunds: %v %v", p, err)
	}
	events, err := c.ListEvents(ctx, client.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Data {
		if e.Type == "refund.succeeded" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d refund.succeeded events, want 2", n)
	}
	assertAudited(t, db, merchant, audit.RefundCreate, audit.RefundCreate)
}

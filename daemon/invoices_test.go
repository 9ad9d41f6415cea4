package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

func TestInvoiceCreateAndList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	ctx := context.Background()
	due := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "9000000", Description: "Pro plan — März", Memo: "m", InvoiceNumber: "INV-1", Recipient: "a@b.c", DueAt: &due})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Object != "invoice" || !strings.HasPrefix(inv.ID, "inv_") || inv.Amount != "9000000" || inv.Status != "open" {
		t.Fatalf("unexpected invoice %+v", inv)
	}
	if inv.CheckoutURL != b.url+"/checkout/"+inv.ID {
		t.Fatalf("checkout_url %q", inv.CheckoutURL)
	}
	if inv.Description != "Pro plan — März" || *inv.Memo != "m" || *inv.InvoiceNumber != "INV-1" || *inv.Recipient != "a@b.c" || !inv.DueAt.Equal(due) || inv.Livemode {
		t.Fatalf("fields not echoed: %s", inv.Raw)
	}
	var raw map[string]any
	if err := json.Unmarshal(inv.Raw, &raw); err != nil || raw["amount"] != "9000000" {
		t.Fatalf("amount must be a string on the wire: %s", inv.Raw)
	}
	// amount as a numeric string is accepted too.
	if _, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListInvoices(ctx, client.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 || list.Data[1].ID != inv.ID || list.HasMore || list.NextCursor != "" {
		t.Fatalf("list: %s", list.Raw)
	}
}

func TestInvoiceValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	long := func(n int) string { return strings.Repeat("é", n) }
	cases := []struct {
		name, body, code, field string
	}{
		{"not json", `{"amount":`, "invalid_json", ""},
		{"empty body", ``, "invalid_json", ""},
		{"array", `[1]`, "invalid_request", ""},
		{"unknown field", `{"amount":1,"description":"d","colour":"red"}`, "invalid_request", "colour"},
		{"missing amount", `{"description":"d"}`, "invalid_request", "amount"},
		{"zero amount", `{"amount":0,"description":"d"}`, "invalid_request", "amount"},
		{"negative amount", `{"amount":-5,"description":"d"}`, "invalid_request", "amount"},
		{"float amount", `{"amount":1.5,"description":"d"}`, "invalid_request", "amount"},
		{"exponent amount", `{"amount":1e6,"description":"d"}`, "invalid_request", "amount"},
		{"plus amount", `{"amount":"+5","description":"d"}`, "invalid_request", "amount"},
		{"decimal string", `{"amount":"9.00","description":"d"}`, "invalid_request", "amount"},
		{"overflow", `{"amount":"99999999999999999999999","description":"d"}`, "invalid_request", "amount"},
		{"bool amount", `{"amount":true,"description":"d"}`, "invalid_request", "amount"},
		{"null amount", `{"amount":null,"description":"d"}`, "invalid_request", "amount"},
		{"missing description", `{"amount":1}`, "invalid_request", "description"},
		{"empty description", `{"amount":1,"description":""}`, "invalid_request", "description"},
		{"long description", `{"amount":1,"description":"` + long(501) + `"}`, "invalid_request", "description"},
		{"description type", `{"amount":1,"description":5}`, "invalid_request", "description"},
		{"long memo", `{"amount":1,"description":"d","memo":"` + long(201) + `"}`, "invalid_request", "memo"},
		{"long invoice_number", `{"amount":1,"description":"d","invoice_number":"` + long(101) + `"}`, "invalid_request", "invoice_number"},
		{"long recipient", `{"amount":1,"description":"d","recipient":"` + long(201) + `"}`, "invalid_request", "recipient"},
		{"bad due_at", `{"amount":1,"description":"d","due_at":"tomorrow"}`, "invalid_request", "due_at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := b.raw("POST", "/v1/invoices", key, tc.body)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("error body not JSON: %q", body)
			}
			if status != http.StatusBadRequest || e.Error.Code != tc.code {
				t.Fatalf("want 400 %s, got %d %s", tc.code, status, body)
			}
			if tc.field != "" && !strings.HasPrefix(e.Error.Message, tc.field+":") {
				t.Fatalf("message %q does not name %s", e.Error.Message, tc.field)
			}
			if h.Get("wc-version") != "2026-07-01" {
				t.Fatal("wc-version missing on error")
			}
		})
	}
	// Limits are inclusive and count characters, not bytes.
	status, _, body := b.raw("POST", "/v1/invoices", key, `{"amount":"1","description":"`+long(500)+`","memo":"`+long(200)+`","invoice_number":"`+long(100)+`","recipient":"`+long(200)+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("boundary lengths rejected: %d %s", status, body)
	}
	// Nothing invalid was stored.
	var n int
	if err := b.db.Get(&n, `SELECT count(*) FROM invoices`); err != nil || n != 1 {
		t.Fatalf("stored %d invoices, want 1 (%v)", n, err)
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	big := `{"amount":1,"description":"` + strings.Repeat("x", 2<<20) + `"}`
	status, h, body := b.raw("POST", "/v1/invoices", key, big)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"invalid_request"`) || h.Get("wc-version") == "" {
		t.Fatalf("got %d %s", status, body)
	}
}

func TestCheckoutPageServerSide(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "9500000", Description: "Widgets <b>x</b>"})
	if err != nil {
		t.Fatal(err)
	}
	status, h, body := b.raw("GET", "/checkout/"+inv.ID, "", "")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("got %d %s", status, h.Get("Content-Type"))
	}
	for _, want := range []string{"9.50 USDC", "Widgets &lt;b&gt;x&lt;/b&gt;", ">open<", inv.ID, "Test mode"} {
		if !strings.Contains(body, want) {
			t.Fatalf("checkout page lacks %q:\n%s", want, body)
		}
	}
	if status, _, _ := b.raw("GET", "/checkout/inv_nope", "", ""); status != 404 {
		t.Fatalf("unknown invoice: %d", status)
	}
}

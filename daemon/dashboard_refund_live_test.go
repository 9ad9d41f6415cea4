package daemon_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"crypto/ecdsa"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/audit"
)

var (
	refundTypedData = regexp.MustCompile(`<code id="refund-typed-data">([^<]+)</code>`)
	hiddenField     = func(name string) *regexp.Regexp {
		return regexp.MustCompile(`name="` + name + `" value="([^"]*)"`)
	}
)

// field is the value of the last page's hidden input name.
func (br *browser) field(name string) string {
	br.t.Helper()
	m := hiddenField(name).FindStringSubmatch(br.last)
	if m == nil {
		br.t.Fatalf("no %s on the page:\n%s", name, br.last)
	}
	return html.UnescapeString(m[1])
}

// A live refund from the payment's page: the confirmation shows the
// settlement wallet and the authorization admin refund prints; the
// wallet's eth_signTypedData_v4 signature (made here in Go) is posted
// back, verified by the rail and submitted by the relayer, and
// refund.succeeded fires once the chain confirms it. Another wallet's
// signature and terms made before another refund are refused and move no
// money; the refund is in the audit log.
func TestDashboardLiveRefund(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 2)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "8000000", Description: "Refundable"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := e.authorize(inv.ID, e.invoiceAuthorization(e.payer, inv.ID)); code != 202 {
		t.Fatalf("pay: %d %v", code, out)
	}
	e.until("paid", func() bool { return len(e.events("invoice.paid")) == 1 })
	paid, _ := e.api.GetInvoice(e.ctx, inv.ID)
	pay := *paid.PaymentID

	e.dashUser(t, e.merchantID, "live@example.com")
	br := e.browser(t)
	br.signIn("live@example.com")
	if a := br.post("/dashboard/mode", url.Values{"mode": {"live"}}); a.status != http.StatusSeeOther {
		t.Fatalf("switch to live: %d", a.status)
	}
	if a := br.get("/dashboard/payments/" + pay); a.status != 200 || strings.Contains(a.body, "admin refund") {
		t.Fatalf("payment page: %d\n%s", a.status, a.body)
	}

	// ask shows the confirmation of a 3 USDC refund and returns the
	// form the page posts, signed by key.
	ask := func(sign *ecdsa.PrivateKey) url.Values {
		t.Helper()
		br.get("/dashboard/payments/" + pay)
		a := br.post("/dashboard/payments/"+pay+"/refund", url.Values{"amount": {"3usdc"}, "reason": {"damaged"}})
		if a.status != 200 || !strings.Contains(a.body, `id="refund-wallet">`+addr(e.merchant).Hex()+"<") ||
			!strings.Contains(a.header.Get("Content-Security-Policy"), "script-src 'sha256-") {
			t.Fatalf("confirmation: %d %s\n%s", a.status, a.header.Get("Content-Security-Policy"), a.body)
		}
		m := refundTypedData.FindStringSubmatch(a.body)
		if m == nil {
			t.Fatal("the confirmation lacks the typed data")
		}
		td, sig := signTerms(t, sign, json.RawMessage(html.UnescapeString(m[1])))
		if td.PrimaryType != "TransferWithAuthorization" || !strings.EqualFold(td.Message["from"].(string), addr(e.merchant).Hex()) ||
			!strings.EqualFold(td.Message["to"].(string), addr(e.payer).Hex()) || td.Message["value"] != "3000000" {
			t.Fatalf("typed data: %+v", td.Message)
		}
		return url.Values{"amount": {br.field("amount")}, "reason": {br.field("reason")}, "confirm": {"yes"},
			"key": {br.field("key")}, "valid_before": {br.field("valid_before")}, "signature": {sig}}
	}
	before := e.usdc(addr(e.payer))

	// The payer's signature, not the settlement wallet's: refused.
	form := ask(e.payer)
	if a := br.post("/dashboard/payments/"+pay+"/refund", form); a.status != 400 || !strings.Contains(a.body, "invalid_signature") {
		t.Fatalf("another wallet's signature: %d\n%s", a.status, a.body)
	}
	// Terms for another refund key: refused before the rail.
	form = ask(e.merchant)
	stale := url.Values{}
	for k, v := range form {
		stale[k] = v
	}
	stale.Set("key", "ref:"+pay+":7")
	if a := br.post("/dashboard/payments/"+pay+"/refund", stale); a.status != 400 || !strings.Contains(a.body, "another refund") {
		t.Fatalf("stale terms: %d\n%s", a.status, a.body)
	}
	// No signature at all.
	form.Del("signature")
	if a := br.post("/dashboard/payments/"+pay+"/refund", form); a.status != 400 || !strings.Contains(a.body, "signature:") {
		t.Fatalf("no signature: %d\n%s", a.status, a.body)
	}

	// The settlement wallet's: submitted, then confirmed.
	form = ask(e.merchant)
	a := br.post("/dashboard/payments/"+pay+"/refund", form)
	if a.status != http.StatusSeeOther || !strings.HasSuffix(a.header.Get("Location"), "done=refund-pending") {
		t.Fatalf("refund: %d %s\n%s", a.status, a.header.Get("Location"), a.body)
	}
	if a = br.get("/dashboard/payments/" + pay + "?done=refund-pending"); !strings.Contains(a.body, "once the chain confirms it") {
		t.Fatalf("after the refund:\n%s", a.body)
	}
	e.until("refund.succeeded", func() bool { return len(e.events("refund.succeeded")) == 1 })
	if got := e.usdc(addr(e.payer)); got != before+3_000_000 {
		t.Fatalf("payer got %d back, want 3000000", got-before)
	}
	if a = br.get("/dashboard/payments/" + pay); !strings.Contains(a.body, "partially_refunded") || !strings.Contains(a.body, `id="refunded">3.00 USDC`) {
		t.Fatalf("payment after the refund:\n%s", a.body)
	}
	if eth := e.eth(addr(e.merchant)); eth.Sign() != 0 {
		t.Fatalf("the merchant spent ETH: %v", eth)
	}
	if a = br.get("/dashboard/audit"); !strings.Contains(a.body, ">"+audit.RefundCreate+"<") || !strings.Contains(a.body, pay+": 3.00 USDC (damaged)") ||
		strings.Count(a.body, ">"+audit.RefundCreate+"<") != 1 {
		t.Fatalf("the refund is not in the audit log once:\n%s", a.body)
	}
}

package daemon_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The hosted checkout pages over plain HTTP: every view's HTML, status
// code and headers, without a browser (checkout_browser_test.go drives the
// same pages in Chromium).

func TestCheckoutInvoicePage(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	due := time.Date(2030, 1, 31, 12, 0, 0, 0, time.UTC)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "12340000", Description: `Widgets <b>"x"</b>`,
		InvoiceNumber: "INV-77", Memo: "Thanks & see you", DueAt: &due})
	if err != nil {
		t.Fatal(err)
	}
	p := f.page("/checkout/" + inv.ID)
	p.is(t, 200, append(walletForms("/checkout/"+inv.ID+"/pay", invoiceWallets),
		`<title>Pay 12.34 USDC to Acme Widgets · tollgate checkout</title>`, `<strong id="merchant">Acme Widgets</strong>`,
		`<span id="amount">12.34 USDC</span>`, `<h1 id="description">Widgets &lt;b&gt;&#34;x&#34;&lt;/b&gt;</h1>`,
		`id="status" data-status="open">open</span>`, `<dd id="invoice-number">INV-77</dd>`,
		`<dd id="due"><time datetime="2030-01-31T12:00:00Z">31 Jan 2030</time></dd>`, `<dd id="memo">Thanks &amp; see you</dd>`,
		`<dd id="invoice-id"><code>`+inv.ID+`</code></dd>`, "Pays successfully", "Declined: insufficient funds"),
		append(subscriptionOnlyWallets, `id="receipt"`, `id="error"`, `id="unavailable"`, "next charge")...)
}

func TestCheckoutInvoicePaidInTheBrowserFlow(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "9500000", Description: "Pro licence"})
	if err != nil {
		t.Fatal(err)
	}
	// A declined wallet: 402 and the page again, with the rail's reason and
	// the wallets to try again.
	p := f.payForm(inv.ID, url.Values{"payer": {rail.WalletInsufficient}, "wallet": {"ignored"}})
	p.is(t, http.StatusPaymentRequired, append(walletForms("/checkout/"+inv.ID+"/pay", invoiceWallets),
		`id="error" role="alert"`, "Payment failed", `<p id="error-message">The wallet does not have enough USDC for this payment.</p>`, "Nothing was charged"),
		"payment_failed", rail.InsufficientFunds)
	// A tampered payer: 400 naming the field.
	p = f.payForm(inv.ID, url.Values{"payer": {"0x1111111111111111111111111111111111111111"}})
	p.is(t, http.StatusBadRequest, []string{"The payment form was not valid", "Please reload the page and choose a wallet again."}, "invalid_request")
	p = f.payForm(inv.ID, url.Values{"payer": {"0x42\x00"}})
	p.is(t, http.StatusBadRequest, []string{"The payment form was not valid"}, "invalid_request")

	// Paying: 303 back to the page, which is now the receipt. A double
	// submit lands on the same receipt and charges nothing more.
	for range 2 {
		p = f.payForm(inv.ID, url.Values{"payer": {rail.WalletSucceeds}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/checkout/"+inv.ID {
			t.Fatalf("pay: %d %q %s", p.status, p.header.Get("Location"), p.body)
		}
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{})
	if err != nil || len(pays.Data) != 1 {
		t.Fatalf("payments after a double submit: %v %v", pays, err)
	}
	pay := pays.Data[0]
	p = f.page("/checkout/" + inv.ID)
	p.is(t, 200, []string{`id="status" data-status="paid">paid</span>`, `id="paid-notice" role="status"`,
		`<h2 id="receipt-heading">Receipt</h2>`, `<dd id="payment-id"><code>` + pay.ID + `</code></dd>`,
		`<dd id="tx-hash"><code>` + *pay.TxHash + `</code></dd>`, `<dd id="payer"><code>` + rail.WalletSucceeds + `</code></dd>`,
		`<dd id="network">test (simulated rail)</dd>`, `<dd id="amount-paid">9.50 USDC</dd>`,
		`<dd id="paid-at"><time datetime="` + pay.ConfirmedAt.UTC().Format(time.RFC3339) + `">`, "Receipt: 9.50 USDC paid to Acme Widgets"},
		"<form", "test wallets below")

	// Someone else paying a paid invoice: 409, the receipt stays, no form.
	p = f.payForm(inv.ID, url.Values{"payer": {rail.WalletTransientOnce}})
	p.is(t, http.StatusConflict, []string{"This invoice cannot be paid", `id="receipt"`, "It has already been paid, or the merchant has cancelled it."},
		"<form", "invoice_not_open", "is paid")
}

func TestCheckoutVoidInvoicePage(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "1000000", Description: "Cancelled order"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.VoidInvoice(f.ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
	f.page("/checkout/"+inv.ID).is(t, 200, []string{`data-status="void">void</span>`, `id="void-notice"`, "was voided on", "can no longer be paid"},
		"<form", "<button", `id="receipt"`)
	p := f.payForm(inv.ID, url.Values{"payer": {rail.WalletSucceeds}})
	p.is(t, http.StatusConflict, []string{"This invoice cannot be paid", "voided"}, "<form", "invoice_not_open", "is void")
}

func TestCheckoutLicensedPlanPage(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pl := f.plan(client.PlanParams{Name: "Pro <team>", Description: "Everything, & more", Amount: "9000000", Interval: "month"})
	path := "/checkout/" + pl.ID
	f.page(path).is(t, 200, append(walletForms(path+"/pay", rail.MagicWallets()), `<h1 id="product-name">Pro &lt;team&gt;</h1>`,
		`<p class="lead" id="product-description">Everything, &amp; more</p>`, `<span id="amount">9.00 USDC</span> <span class="per" id="interval">per month</span>`,
		`Licensed: a fixed 9.00 USDC, charged when you subscribe and then every month.`, `<dd id="plan-id"><code>`+pl.ID+`</code></dd>`,
		"Subscription from Acme Widgets"), `id="pricing"`, "Up to", `id="status"`, "external_customer_id")

	// The merchant's id for the customer rides from the URL into every form.
	ext := `u_42"><x`
	p := f.page(path + "?external_customer_id=" + url.QueryEscape(ext))
	p.is(t, 200, []string{`<input type="hidden" name="external_customer_id" value="u_42&#34;&gt;&lt;x">`, `<code id="external-customer-id">u_42&#34;&gt;&lt;x</code>`})
	// Every pay form, and the coupon form that reloads the page.
	if n := strings.Count(p.body, `name="external_customer_id"`); n != len(rail.MagicWallets())+1 {
		t.Fatalf("%d forms carry the external id", n)
	}
	p = f.payForm(pl.ID, url.Values{"payer": {rail.WalletSucceeds}, "external_customer_id": {ext}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, path+"?subscription=sub_") {
		t.Fatalf("subscribe: %d %q %s", p.status, loc, p.body)
	}
	x := f.sub(strings.TrimPrefix(loc, path+"?subscription="))
	cus, err := f.c.GetCustomer(f.ctx, *x.CustomerID)
	if err != nil || cus.ExternalCustomerID == nil || *cus.ExternalCustomerID != ext {
		t.Fatalf("customer %v %v", cus, err)
	}
	f.page(loc).is(t, 200, []string{`data-status="active">active</span>`, `id="subscribed-notice"`, `<h2 id="receipt-heading">Your subscription</h2>`,
		`<dd id="subscription-id"><code>` + x.ID + `</code></dd>`, `<dd id="subscription-status">active</dd>`,
		`<dd id="next-charge">9.00 USDC on ` + x.CurrentPeriodEnd.UTC().Format("2 Jan 2006") + `</dd>`,
		`<dd id="payment-id"><code>` + *x.LatestPaymentID + `</code></dd>`, `<dd id="amount-paid">9.00 USDC</dd>`, `id="tx-hash"`,
		`id="current-period"`}, "<form")

	// The same customer again: 409 already_subscribed, on the page.
	p = f.payForm(pl.ID, url.Values{"payer": {rail.WalletSucceeds}, "external_customer_id": {ext}})
	p.is(t, http.StatusConflict, []string{"Already subscribed", "You already have an active subscription to this plan", `value="u_42&#34;&gt;&lt;x"`},
		"already_subscribed", "cus_")
	// A subscription of another plan, or garbage, is not shown.
	other := f.plan(client.PlanParams{Name: "Other", Amount: "1000000", Interval: "week"})
	for _, q := range []string{"?subscription=" + x.ID, "?subscription=%00", "?subscription=%ff", "?subscription=sub_nope"} {
		f.page("/checkout/"+other.ID+q).is(t, 200, []string{"per week", `id="pay-`}, `id="receipt"`)
	}
	f.page(path+"?external_customer_id=%ff%00").is(t, 200, []string{`id="pay-`}, "external_customer_id")
}

func TestCheckoutPastDueSubscriptionPage(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pl := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "biweekly"})
	x := f.subscribe(pl.ID, rail.WalletFailsTwiceAfter1, "")
	f.advance("15d")
	if got := f.sub(x.ID); got.Status != "past_due" {
		t.Fatalf("status %s", got.Status)
	}
	f.page("/checkout/"+pl.ID+"?subscription="+x.ID).is(t, 200, []string{"per two weeks", `data-status="past_due">past due</span>`,
		`id="past-due-notice"`, `<dt>Next attempt</dt><dd id="next-charge"><time`}, "<form")
}

func TestCheckoutMeteredPlanPages(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	m, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "tokens", DisplayName: "AI tokens", UnitLabel: "token"})
	if err != nil {
		t.Fatal(err)
	}
	days := 10
	for _, c := range []struct {
		name, model string
		interval    string
		days        *int
		wants       []string
	}{
		{"graduated", `{"kind":"tiered","mode":"graduated","tiers":[{"upTo":1000,"unitAmount":0},{"upTo":1000000,"unitAmount":25},{"upTo":null,"unitAmount":10}]}`, "month", nil, []string{
			`<table id="pricing">`, `<caption id="pricing-rule">Graduated tiers: each unit is priced at the rate of the tier it falls in.</caption>`,
			`<th scope="col">Units (token)</th>`, "<tr><td>1 – 1,000</td><td>Free</td></tr>", "<tr><td>1,001 – 1,000,000</td><td>0.000025 USDC</td></tr>",
			"<tr><td>1,000,001 and up</td><td>0.00001 USDC</td></tr>"}},
		{"volume", `{"kind":"tiered","mode":"volume","tiers":[{"upTo":1,"unitAmount":5},{"upTo":null,"unitAmount":1}]}`, "year", nil, []string{
			"Volume tiers: every unit is priced at the rate of the tier the year&#39;s total falls in.", "<tr><td>1</td><td>0.000005 USDC</td></tr>",
			"<tr><td>2 and up</td>"}},
		{"per_unit", `{"kind":"per_unit","unitAmount":1500,"includedUnits":10000}`, "custom", &days, []string{
			`<p id="pricing-rule">0.0015 USDC per token.</p>`, `<p id="included">The first 10,000 each 10 days are included at no charge.</p>`, "per 10 days"}},
		{"package", `{"kind":"package","unitAmount":500000,"packageSize":1000}`, "week", nil, []string{
			"0.50 USDC per package of 1,000 units (token); a started package is charged in full."}},
		{"flat", `{"kind":"flat","amount":5000000}`, "month", nil, []string{"A flat 5.00 USDC per month, whatever the usage."}},
	} {
		pl := f.plan(client.PlanParams{Name: "Usage " + c.name, Amount: "50000000", Interval: c.interval, IntervalDays: c.days,
			UsageType: "metered", Meter: m.ID, PricingModel: []byte(c.model)})
		wants := append(c.wants, `<span class="upto">Up to </span><span id="amount">50.00 USDC</span>`, `<h2 id="pricing-heading">Pricing</h2>`,
			`id="usage-type">Metered: your usage of AI tokens is billed at the end of every`, `<dd id="cap">At most 50.00 USDC per`,
			`<p id="cap-rule">Charges are capped at 50.00 USDC per`)
		f.page("/checkout/"+pl.ID).is(t, 200, append(wants, walletForms("/checkout/"+pl.ID+"/pay", rail.MagicWallets())...))
		if c.name != "graduated" {
			continue
		}
		x := f.subscribe(pl.ID, rail.WalletSucceeds, "")
		f.page("/checkout/"+pl.ID+"?subscription="+x.ID).is(t, 200, []string{`<dd id="subscription-status">active</dd>`,
			`<dd id="next-charge">This period&#39;s usage, up to 50.00 USDC, after`}, "<form", `id="payment-id"`)
	}
}

func TestCheckoutLiveModePages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.key(b.merchant("Live Shop"), tenant.Live)
	c := b.client(key)
	inv, err := c.CreateInvoice(t.Context(), client.InvoiceParams{Amount: "1000000", Description: "Real goods"})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := c.CreatePlan(t.Context(), client.PlanParams{Name: "Live plan", Amount: "1000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{inv.ID, pl.ID} {
		b.page("/checkout/"+id).is(t, 200, []string{`id="unavailable"`, "Payment is not available yet", "no on-chain settlement configured"},
			"<form", "<button", `id="test-mode"`, "Test mode")
		p := b.payForm(id, url.Values{"payer": {"0x" + strings.Repeat("ab", 20)}})
		p.is(t, http.StatusPaymentRequired, []string{"Payment is not available", "Payments cannot be taken here yet. Please contact the merchant."},
			"<form", "serve --", "payment_failed")
	}
}

func TestCheckoutNotFoundPages(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	for _, path := range []string{"/checkout/inv_nope", "/checkout/price_nope", "/checkout/sub_x", "/checkout/x", "/checkout/inv_%00",
		"/checkout/inv_%ff", "/checkout/price_%ff%fe", "/checkout/price_a%00b", "/checkout/inv_" + strings.Repeat("x", 5000)} {
		f.page(path).is(t, 404, []string{`<h1 id="not-found">This checkout link is not valid</h1>`, "Check the link you were sent"}, "<form", "<button")
		p := f.payForm(strings.TrimPrefix(path, "/checkout/"), url.Values{"payer": {rail.WalletSucceeds}})
		p.is(t, 404, []string{"This checkout link is not valid"}, "<form")
	}
	req, err := http.NewRequest("POST", f.url+"/checkout/inv_%00/pay", strings.NewReader(`{"payer":"`+rail.WalletSucceeds+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p := f.do(req); p.status != 404 || !strings.Contains(p.body, `"resource_not_found"`) {
		t.Fatalf("JSON pay of a NUL id: %d %s", p.status, p.body)
	}
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "1000000", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.payForm(inv.ID, url.Values{"payer": {rail.WalletSucceeds}, "external_customer_id": {"a\xffb"}})
	p.is(t, 400, []string{"The payment form was not valid"}, "invalid_request")
}

func TestCheckoutFormsFollowTheBaseURLPath(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.BaseURL = "https://pay.example.com/billing/" })
	c, _ := b.testClient()
	inv, err := c.CreateInvoice(t.Context(), client.InvoiceParams{Amount: "1000000", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.CheckoutURL != "https://pay.example.com/billing/checkout/"+inv.ID {
		t.Fatalf("checkout_url %q", inv.CheckoutURL)
	}
	b.page("/checkout/"+inv.ID).is(t, 200, []string{`action="/billing/checkout/` + inv.ID + `/pay"`})
	p := b.payForm(inv.ID, url.Values{"payer": {rail.WalletSucceeds}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/billing/checkout/"+inv.ID {
		t.Fatalf("redirect %d %q", p.status, p.header.Get("Location"))
	}
}

// A checkout found already_subscribed only when recording (the test rail
// settles in the same transaction) leaves no settlement behind; a declined
// one keeps its settlement, so asking again is declined the same way.
func TestCheckoutSettlementsFollowTheirRecords(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pl := f.plan(client.PlanParams{Name: "Monthly", Amount: "3000000", Interval: "month"})
	settlements := func() int {
		t.Helper()
		var n int
		if err := f.db.GetContext(f.ctx, &n, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1`, f.m); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.subscribe(pl.ID, rail.WalletSucceeds, "u_1")
	for range 2 {
		_, err := f.c.Pay(f.ctx, pl.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u_1"})
		apiErr(t, err, 409, "already_subscribed")
	}
	if n := settlements(); n != 1 {
		t.Fatalf("%d settlements after two refused checkouts", n)
	}
	inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "1000000", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := f.c.Pay(f.ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletInsufficient})
		if e := apiErr(t, err, 402, "payment_failed"); !strings.Contains(e.Message, "insufficient_funds") {
			t.Fatalf("message %q", e.Message)
		}
	}
	if n := settlements(); n != 2 {
		t.Fatalf("%d settlements after a declined payment asked twice", n)
	}
}

// More concurrent payments than the pool has connections, each with the
// wallet whose first answer the rail loses: every one is paid (a
// transaction never waits for a second connection of the pool).
func TestCheckoutManyConcurrentTransientPayments(t *testing.T) {
	t.Parallel()
	f := setupMoney(t, func(c *daemon.Config) { c.RateLimits = false })
	const n = 48
	ids := make([]string, n)
	for i := range ids {
		inv, err := f.c.CreateInvoice(f.ctx, client.InvoiceParams{Amount: "1000000", Description: "burst"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = inv.ID
	}
	ctx, cancel := context.WithTimeout(f.ctx, 60*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			_, err := f.c.Pay(ctx, id, client.CheckoutParams{Payer: rail.WalletTransientOnce})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

package daemon_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// dashListsFixture is a test merchant with an invoice paid by a named
// customer, an open one, and the portal fixture's two subscriptions: alice
// (usage, credits, an entitlement, a coupon, a pending switch) and mallory
// (set to cancel at the period's end). A user of it is signed in.
type dashListsFixture struct {
	*portalFixture
	br                   *browser
	paid, open           *client.Invoice
	payment              string // the paid invoice's payment
	aliceCus, malloryCus string
}

func setupDashLists(t *testing.T) *dashListsFixture {
	t.Helper()
	p := setupPortal(t)
	f := &dashListsFixture{portalFixture: p}
	var err error
	if f.paid, err = p.c.CreateInvoice(p.ctx, client.InvoiceParams{Amount: "10000000", Description: "Widgets, a crate", InvoiceNumber: "INV-7", Recipient: "Bob Baker Ltd"}); err != nil {
		t.Fatal(err)
	}
	res, err := p.c.Pay(p.ctx, f.paid.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		t.Fatal(err)
	}
	f.payment = res.Payment.ID
	if f.open, err = p.c.CreateInvoice(p.ctx, client.InvoiceParams{Amount: "3000000", Description: "Spare parts"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CreateMeter(p.ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls", Aggregation: "count", UnitLabel: "calls"}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := p.c.SendMeterEvent(p.ctx, client.MeterEventParams{EventName: "api_calls", ExternalCustomerID: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.c.GrantCredits(p.ctx, client.CreditGrantParams{ExternalCustomerID: "alice", Amount: "2500000", Reason: "Welcome credit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CreateFeature(p.ctx, client.FeatureParams{Key: "sso", Name: "Single sign-on"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.GrantEntitlement(p.ctx, client.EntitlementGrantParams{FeatureKey: "sso", ExternalCustomerID: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CreateCoupon(p.ctx, client.CouponParams{PercentOff: 20, Duration: "repeating", DurationInPeriods: 3, Code: "LAUNCH"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.SetSubscriptionDiscount(p.ctx, p.alice.ID, "LAUNCH"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.ChangeSubscription(p.ctx, p.alice.ID, client.ChangeParams{Plan: p.starter.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CancelSubscription(p.ctx, p.mallory.ID, client.CancelParams{}); err != nil {
		t.Fatal(err)
	}
	f.aliceCus, f.malloryCus = *p.alice.CustomerID, *p.mallory.CustomerID
	p.dashUser(t, p.m, "ops@example.com")
	f.br = p.browser(t)
	f.br.signIn("ops@example.com")
	return f
}

// has fails unless the page at path answers 200 in test mode (bannered)
// with every text of want.
func (f *dashListsFixture) has(t *testing.T, path string, want ...string) string {
	t.Helper()
	a := f.br.get(path)
	if a.status != http.StatusOK {
		t.Fatalf("%s: %d\n%s", path, a.status, a.body)
	}
	for _, w := range append(want, `id="test-mode"`) {
		if !strings.Contains(a.body, w) {
			t.Errorf("%s lacks %q", path, w)
		}
	}
	return a.body
}

// An invoice's list row and page: status, amount, its line, number and
// recipient, the checkout link, the payment and the wallet that paid it;
// an open invoice is not paid.
func TestDashboardInvoicePages(t *testing.T) {
	f := setupDashLists(t)
	f.has(t, "/dashboard/invoices", `href="/dashboard/invoices/`+f.paid.ID+`"`, "Widgets, a crate", "10.00 USDC", f.open.ID, "Spare parts", ">Invoices</a>")
	f.has(t, "/dashboard/invoices/"+f.paid.ID, `id="invoice-amount">10.00 USDC<`, `id="invoice-status">paid<`, `id="invoice-number">INV-7<`,
		`<td>Widgets, a crate</td>`, `href="`+f.url+`/checkout/`+f.paid.ID+`" id="checkout-link"`, `href="/dashboard/payments/`+f.payment+`"`,
		`id="recipient">Bob Baker Ltd<`, `id="invoice-payer">`+rail.WalletSucceeds+`<`)
	f.has(t, "/dashboard/payments/"+f.payment, `href="/dashboard/invoices/`+f.paid.ID+`"`)
	f.has(t, "/dashboard/invoices/"+f.open.ID, `id="invoice-status">open<`, `id="no-payment"`, "3.00 USDC")

	// One invoice a page: the newest, then the older by the cursor link.
	a := f.br.get("/dashboard/invoices?limit=1")
	next := regexp.MustCompile(`href="([^"]+)" id="older"`).FindStringSubmatch(a.body)
	if a.status != 200 || !strings.Contains(a.body, f.open.ID) || strings.Contains(a.body, f.paid.ID) || next == nil {
		t.Fatalf("first page of one: %d\n%s", a.status, a.body)
	}
	if a = f.br.get(strings.ReplaceAll(next[1], "&amp;", "&") + "&limit=1"); !strings.Contains(a.body, f.paid.ID) || strings.Contains(a.body, f.open.ID) {
		t.Fatalf("second page:\n%s", a.body)
	}
}

// A subscription's page: plan, product and price, payer, period, the
// pending switch, the discount, the cancellation, the next charge and its
// payments; the list links each to its customer.
func TestDashboardSubscriptionPages(t *testing.T) {
	f := setupDashLists(t)
	f.has(t, "/dashboard/subscriptions", `href="/dashboard/subscriptions/`+f.alice.ID+`"`, `href="/dashboard/customers/`+f.aliceCus+`"`, f.mallory.ID, f.plan.ID)
	alice := f.sub(f.alice.ID)
	f.has(t, "/dashboard/subscriptions/"+f.alice.ID, `id="product">Team`, `id="price">12.00 USDC per month<`, `<code id="plan">`+f.plan.ID+`<`,
		`id="subscription-customer">`+f.aliceCus+`<`, `<code id="payer">`+rail.WalletSucceeds+`<`, `id="period">`,
		`id="pending">To Starter (<code>`+f.starter.ID+`</code>)`, `id="discount">20% off`, `id="next-charge"><strong>9.60 USDC</strong>`, `<td class="num">-2.40 USDC</td>`,
		`href="/dashboard/payments/`+*alice.LatestPaymentID+`"`, "12.00 USDC")
	body := f.has(t, "/dashboard/subscriptions/"+f.mallory.ID, `id="cancel-at">`, `id="subscription-status"`)
	if strings.Contains(body, `id="pending"`) || strings.Contains(body, `id="discount"`) {
		t.Fatal("mallory's page shows alice's change or discount")
	}
	if !strings.Contains(f.has(t, "/dashboard/payments/"+*alice.LatestPaymentID), `href="/dashboard/subscriptions/`+f.alice.ID+`"`) {
		t.Fatal("the payment does not link its subscription")
	}
}

// A customer's page: its subscriptions, credit balance and ledger, its
// entitlements, its usage this period as a chart drawn on the server, and
// its payments; the list pages by cursor.
func TestDashboardCustomerPages(t *testing.T) {
	f := setupDashLists(t)
	f.has(t, "/dashboard/customers", `href="/dashboard/customers/`+f.aliceCus+`"`, "<code>alice</code>", f.malloryCus)
	body := f.has(t, "/dashboard/customers/"+f.aliceCus, "<code id=\"external-id\">alice</code>", `href="/dashboard/subscriptions/`+f.alice.ID+`"`,
		`id="credit-balance">2.50 USDC<`, "Granted: Welcome credit", "<td>Single sign-on</td>", "<td>Active</td>",
		`<h3 id="meter-`, `>API calls</h3>`, `<strong class="usage-total">5</strong> calls`, `<svg viewBox=`, `aria-label="API calls per day`)
	if strings.Contains(body, f.mallory.ID) || strings.Contains(body, "<script") {
		t.Fatalf("alice's page shows another's subscription or a script:\n%s", body)
	}
	body = f.has(t, "/dashboard/customers/"+f.malloryCus, `id="no-usage"`, `id="credit-balance">No credits.<`, `id="no-features"`, f.mallory.ID)
	if strings.Contains(body, f.alice.ID) || strings.Contains(body, "Welcome credit") {
		t.Fatal("mallory's page shows alice's data")
	}

	seen := map[string]bool{}
	path := "/dashboard/customers?limit=1"
	for range 5 {
		a := f.br.get(path)
		for _, m := range regexp.MustCompile(`href="/dashboard/customers/(cus_[0-9A-Za-z]+)"`).FindAllStringSubmatch(a.body, -1) {
			if seen[m[1]] {
				t.Fatalf("%s twice", m[1])
			}
			seen[m[1]] = true
		}
		next := regexp.MustCompile(`href="([^"]+)" id="older"`).FindStringSubmatch(a.body)
		if next == nil {
			break
		}
		path = strings.ReplaceAll(next[1], "&amp;", "&") + "&limit=1"
	}
	if len(seen) != 2 || !seen[f.aliceCus] || !seen[f.malloryCus] {
		t.Fatalf("paged through %v, want alice and mallory", seen)
	}
}

// An attacker's session reads none of the new pages' objects by id: a
// user of another merchant, and the merchant's own user in the other mode,
// get the dashboard's not-found page with none of the object's data, as
// for an id that names nothing; the lists show none of them.
func TestDashboardListsAttacker(t *testing.T) {
	f := setupDashLists(t)
	_, liveKey := f.bundle.key(f.m, tenant.Live)
	g, err := f.client(liveKey).GrantCredits(f.ctx, client.CreditGrantParams{ExternalCustomerID: "live-carol", Amount: "1000000"})
	if err != nil {
		t.Fatal(err)
	}
	testPaths := []string{"/dashboard/invoices/" + f.paid.ID, "/dashboard/invoices/" + f.open.ID, "/dashboard/subscriptions/" + f.alice.ID,
		"/dashboard/subscriptions/" + f.alice.ID + "?before=9999-01-01T00:00:00Z", "/dashboard/customers/" + f.aliceCus}
	secrets := []string{"Widgets, a crate", "Spare parts", f.plan.ID, "Welcome credit", rail.WalletSucceeds, f.payment}
	missing := func(br *browser, who, path string) {
		t.Helper()
		a := br.get(path)
		if a.status != http.StatusNotFound || !strings.Contains(a.body, `id="not-found"`) {
			_, main, _ := strings.Cut(a.body, "<main")
			t.Errorf("%s reads %s: %d\n%.400s %q", who, path, a.status, main, a.body[:min(300, len(a.body))])
		}
		for _, s := range secrets {
			if strings.Contains(a.body, s) {
				t.Errorf("%s's answer for %s shows %q", who, path, s)
			}
		}
	}

	// Another merchant's user.
	mB := f.merchant("Other Co")
	f.dashUser(t, mB, "eve@example.com")
	eve := f.browser(t)
	eve.signIn("eve@example.com")
	for _, path := range append(testPaths, "/dashboard/customers/"+g.CustomerID, "/dashboard/customers/alice", "/dashboard/invoices/inv_%00", "/dashboard/customers/%3Cscript%3E") {
		missing(eve, "merchant B", path)
	}
	for _, list := range []string{"/dashboard/invoices", "/dashboard/subscriptions", "/dashboard/customers"} {
		a := eve.get(list)
		for _, id := range []string{f.paid.ID, f.alice.ID, f.aliceCus, g.CustomerID} {
			if a.status != 200 || strings.Contains(a.body, id) {
				t.Errorf("merchant B's %s: %d, shows %s", list, a.status, id)
			}
		}
	}

	// The merchant's own user: a live id from test mode, then test ids
	// from live mode.
	missing(f.br, "test mode", "/dashboard/customers/"+g.CustomerID)
	f.br.get("/dashboard")
	if a := f.br.post("/dashboard/mode", url.Values{"mode": {"live"}}); a.status != http.StatusSeeOther {
		t.Fatalf("mode: %d", a.status)
	}
	for _, path := range testPaths {
		missing(f.br, "live mode", path)
	}
	if a := f.br.get("/dashboard/customers/" + g.CustomerID); a.status != 200 || !strings.Contains(a.body, "live-carol") || strings.Contains(a.body, `id="test-mode"`) {
		t.Fatalf("live mode, live customer: %d", a.status)
	}
}

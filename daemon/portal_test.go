package daemon_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// POST /v1/portal_sessions: the answer's shape, a link good for an hour by
// the merchant's clock, its token stored only as a digest, and refusals.
func TestPortalSessionCreate(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	ps := p.session("alice")
	if !strings.HasPrefix(ps.ID, "ps_") || ps.Object != "portal_session" || ps.CustomerID != *p.alice.CustomerID || ps.ReturnURL != nil {
		t.Fatalf("session %+v", ps)
	}
	token := strings.TrimPrefix(p.portalPath(ps), "/portal/")
	if len(token) != id.TokenLen {
		t.Fatalf("token %q: %d characters, want %d (256 bits)", token, len(token), id.TokenLen)
	}
	var created, expires time.Time
	var hash []byte
	if err := p.db.QueryRowContext(p.ctx, `SELECT created_at, expires_at, token_hash FROM portal_sessions WHERE id = $1`, ps.ID).Scan(&created, &expires, &hash); err != nil {
		t.Fatal(err)
	}
	if expires.Sub(created) != time.Hour || !ps.ExpiresAt.Equal(expires) {
		t.Fatalf("created %v, expires %v (answer %v): want one hour", created, expires, ps.ExpiresAt)
	}
	if string(hash) != string(id.HashToken(token)) {
		t.Fatal("the stored digest is not the token's SHA-256")
	}
	var leaks int
	if err := p.db.QueryRowContext(p.ctx, `SELECT count(*) FROM portal_sessions s WHERE s::text LIKE '%' || $1 || '%'`, token).Scan(&leaks); err != nil || leaks != 0 {
		t.Fatalf("the token is stored in %d rows (%v)", leaks, err)
	}
	// By cus_ id, with plans and a loopback http return URL.
	ps2, err := p.c.CreatePortalSession(p.ctx, client.PortalSessionParams{CustomerID: *p.alice.CustomerID, Plans: []string{p.otherPlan.ID},
		ReturnURL: "http://127.0.0.1:3000/account"})
	if err != nil || ps2.ReturnURL == nil || *ps2.ReturnURL != "http://127.0.0.1:3000/account" || ps2.URL == ps.URL {
		t.Fatalf("%+v %v", ps2, err)
	}
	// An Idempotency-Key is not recorded: the answer holds a secret.
	_, _, b1 := p.raw("POST", "/v1/portal_sessions", p.key, `{"external_customer_id":"alice"}`)
	if !strings.Contains(b1, `"url"`) {
		t.Fatal(b1)
	}
	// Another merchant's plan, unknown customers, bad return URLs.
	other, _ := setupPortalPlanElsewhere(p)
	for _, c := range []struct {
		params      client.PortalSessionParams
		status      int
		code, field string
	}{
		{client.PortalSessionParams{ExternalCustomerID: "nobody"}, 400, "unknown_customer", ""},
		{client.PortalSessionParams{CustomerID: "cus_nope"}, 400, "unknown_customer", ""},
		{client.PortalSessionParams{}, 400, "customer_required", ""},
		{client.PortalSessionParams{ExternalCustomerID: "alice", ReturnURL: "http://example.com/"}, 400, "invalid_request", "return_url"},
		{client.PortalSessionParams{ExternalCustomerID: "alice", ReturnURL: "javascript:alert(1)"}, 400, "invalid_request", "return_url"},
		{client.PortalSessionParams{ExternalCustomerID: "alice", Plans: []string{other}}, 400, "invalid_request", "plans"},
	} {
		_, err := p.c.CreatePortalSession(p.ctx, c.params)
		e := apiErr(t, err, c.status, c.code)
		if c.field != "" && !strings.HasPrefix(e.Message, c.field) {
			t.Errorf("%+v: message %q does not name %s", c.params, e.Message, c.field)
		}
	}
	if n := p.count("customers", p.m); n != 2 {
		t.Fatalf("%d customers: a session must never create one", n)
	}
}

// setupPortalPlanElsewhere makes a plan of another merchant on the same
// server and returns its id and that merchant's client.
func setupPortalPlanElsewhere(p *portalFixture) (string, *client.Client) {
	p.t.Helper()
	_, key := p.bundle.key(p.merchant("Elsewhere"), tenant.Test)
	c := p.client(key)
	pl, err := c.CreatePlan(p.ctx, client.PlanParams{Name: "Other", Amount: "5000000", Interval: "month"})
	if err != nil {
		p.t.Fatal(err)
	}
	return pl.ID, c
}

// The overview shows the customer's subscription, its next charge, credits
// and payments, and nothing of the other customer; cancel and undo work
// through forms and the API sees each step.
func TestPortalOverviewCancelUndo(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	if _, err := p.c.GrantCredits(p.ctx, client.CreditGrantParams{ExternalCustomerID: "alice", Amount: "2500000", Reason: "welcome"}); err != nil {
		t.Fatal(err)
	}
	path := p.portalPath(p.session("alice"))
	pg := p.page(path)
	pg.secure(t)
	if pg.status != 200 {
		t.Fatalf("status %d:\n%s", pg.status, pg.body)
	}
	pg.has(t, []string{"Acme Widgets", "Your account", p.alice.ID, "Team", "12.00 USDC per month", rail.WalletSucceeds, "Next charge",
		"Cancel at period end", "2.50 USDC", "welcome", "Latest payments", "12.00 USDC", `id="test-mode"`},
		p.mallory.ID, "mallory", "Keep my subscription")
	token := csrf(t, pg.body)
	r := p.postForm(path+"/subscriptions/"+p.alice.ID+"/cancel", url.Values{"csrf_token": {token}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != path+"?done=canceled" {
		t.Fatalf("cancel: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	x := p.sub(p.alice.ID)
	if x.CancelAt == nil || x.CurrentPeriodEnd == nil || !x.CancelAt.Equal(*x.CurrentPeriodEnd) || x.Status != "active" {
		t.Fatalf("after cancel: %+v", x)
	}
	pg = p.page(path + "?done=canceled")
	pg.has(t, []string{"will end at the end of the current period", "Ends on", "Keep my subscription"}, "Cancel at period end")
	r = p.postForm(path+"/subscriptions/"+p.alice.ID+"/undo-cancel", url.Values{"csrf_token": {token}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("undo: %d\n%s", r.status, r.body)
	}
	if x := p.sub(p.alice.ID); x.CancelAt != nil || x.Status != "active" {
		t.Fatalf("after undo: %+v", x)
	}
	// The test-mode payer swap.
	r = p.postForm(path+"/subscriptions/"+p.alice.ID+"/payer", url.Values{"csrf_token": {token}, "payer": {rail.WalletFailsAfter1st}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("payer: %d\n%s", r.status, r.body)
	}
	if x := p.sub(p.alice.ID); x.Payer == nil || *x.Payer != rail.WalletFailsAfter1st {
		t.Fatalf("after payer swap: %+v", x)
	}
	r = p.postForm(path+"/subscriptions/"+p.alice.ID+"/payer", url.Values{"csrf_token": {token}, "payer": {"0x1111111111111111111111111111111111111111"}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "cannot be made") {
		t.Fatalf("payer not a test wallet: %d\n%s", r.status, r.body)
	}
	// The events are the API's: cancelling at the period's end and its
	// undo each emit subscription.updated, with cancel_at set, then
	// cleared; nothing names the portal.
	end := p.alice.CurrentPeriodEnd.UTC().Format(time.RFC3339)
	if got := p.cancelAts(p.alice.ID); !slices.Equal(got, []string{end, "null"}) {
		t.Fatalf("subscription.updated of cancel and undo: cancel_at %v", got)
	}
	for _, typ := range p.eventTypes() {
		if strings.HasPrefix(typ, "portal") {
			t.Fatalf("event %s", typ)
		}
	}
}

// Payments page, receipt and the usage page.
func TestPortalPaymentsReceiptUsage(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	path := p.portalPath(p.session("alice"))
	pays, err := p.c.ListPayments(p.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var mine, theirs string
	for _, x := range pays.Data {
		switch {
		case x.SubscriptionID != nil && *x.SubscriptionID == p.alice.ID:
			mine = x.ID
		case x.SubscriptionID != nil && *x.SubscriptionID == p.mallory.ID:
			theirs = x.ID
		}
	}
	if mine == "" || theirs == "" {
		t.Fatalf("payments %+v", pays.Data)
	}
	pg := p.page(path + "/payments")
	pg.secure(t)
	pg.has(t, []string{mine, "12.00 USDC"}, theirs)
	pg = p.page(path + "/payments/" + mine)
	pg.secure(t)
	pg.has(t, []string{"Receipt", mine, "12.00 USDC", "Paid to Acme Widgets", p.alice.ID, rail.WalletSucceeds, "@media print"})
	pg = p.page(path + "/payments/" + theirs)
	pg.secure(t)
	if pg.status != 404 || strings.Contains(pg.body, theirs) || strings.Contains(pg.body, "mallory") {
		t.Fatalf("another customer's receipt: %d\n%s", pg.status, pg.body)
	}
	pg = p.page(path + "/usage")
	pg.secure(t)
	pg.has(t, []string{"Usage", "No usage recorded recently"})
}

// The usage page charts each meter the customer used, from the usage
// summaries.
func TestPortalUsageChart(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	if _, err := p.c.CreateMeter(p.ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := p.c.SendMeterEvent(p.ctx, client.MeterEventParams{EventName: "api_calls", ExternalCustomerID: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	path := p.portalPath(p.session("alice"))
	pg := p.page(path + "/usage")
	pg.secure(t)
	pg.has(t, []string{"API calls", `<strong class="usage-total">3</strong>`, "<svg", `role="img"`, "<rect", ": 3"}, "No usage recorded")
}

// A trialing subscription shows its trial's end.
func TestPortalTrial(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	days := 14
	trial := p.moneyFixture.plan(client.PlanParams{Name: "Trial plan", Amount: "8000000", Interval: "month", TrialDays: &days})
	x := p.subscribe(trial.ID, rail.WalletSucceeds, "tess")
	if x.Status != "trialing" || x.TrialEnd == nil {
		t.Fatalf("subscription %s", x.Raw)
	}
	pg := p.page(p.portalPath(p.session("tess")))
	pg.secure(t)
	pg.has(t, []string{"Trial plan", `data-status="trialing"`, "Free trial", "Until " + x.TrialEnd.UTC().Format("2 Jan 2006")})
}

package daemon_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// Helpers of the customer portal's tests.

// portalFixture is a test merchant with a customer on a plan, and a second
// customer of the same merchant on the same plan (the "other" an attacker
// aims at).
type portalFixture struct {
	*moneyFixture
	plan, otherPlan *client.Plan
	// starter is cheaper than plan: a switch within the authorization.
	starter        *client.Plan
	alice, mallory *client.Subscription
}

func setupPortal(t testing.TB, opts ...func(*daemon.Config)) *portalFixture {
	t.Helper()
	f := setupMoney(t, opts...)
	p := &portalFixture{moneyFixture: f}
	p.plan = f.plan(client.PlanParams{Name: "Team", Amount: "12000000", Interval: "month"})
	p.otherPlan = f.plan(client.PlanParams{Name: "Business", Amount: "30000000", Interval: "month"})
	p.starter = f.plan(client.PlanParams{Name: "Starter", Amount: "5000000", Interval: "month"})
	p.alice = f.subscribe(p.plan.ID, rail.WalletSucceeds, "alice")
	p.mallory = f.subscribe(p.plan.ID, rail.WalletSucceeds, "mallory")
	return p
}

// session makes a portal session for the external customer ext and
// returns it.
func (p *portalFixture) session(ext string, plans ...string) *client.PortalSession {
	p.t.Helper()
	ps, err := p.c.CreatePortalSession(p.ctx, client.PortalSessionParams{ExternalCustomerID: ext, Plans: plans})
	if err != nil {
		p.t.Fatal(err)
	}
	return ps
}

// path is the session's URL as a path on the test server.
func (b *bundle) portalPath(ps *client.PortalSession) string {
	b.t.Helper()
	if !strings.HasPrefix(ps.URL, b.url+"/portal/") {
		b.t.Fatalf("portal url %q is not under %s/portal/", ps.URL, b.url)
	}
	return strings.TrimPrefix(ps.URL, b.url)
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the form token on a portal page.
func csrf(t *testing.T, body string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf_token field on the page:\n%s", body)
	}
	return m[1]
}

// postForm posts a form to path as a same-origin browser does, with the
// extra headers given (an Origin, say).
func (b *bundle) postForm(path string, form url.Values, headers ...string) pageResp {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// cancelAt is the subscription's cancel_at as the API reads it ("" for
// none).
func (p *portalFixture) cancelAt(id string) string {
	p.t.Helper()
	if x := p.sub(id); x.CancelAt != nil {
		return x.CancelAt.String()
	}
	return ""
}

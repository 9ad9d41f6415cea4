package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The portal attacked: every answer carries the pages' headers, and no id
// in a path or form, no token of another session, merchant or mode, no
// expired link and no post from another origin reads or changes anything.
func TestPortalAttacker(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	alice := p.portalPath(p.session("alice"))
	mallory := p.portalPath(p.session("mallory"))
	alicePage := p.page(alice)
	aliceToken := csrf(t, alicePage.body)
	malloryToken := csrf(t, p.page(mallory).body)
	if aliceToken == malloryToken {
		t.Fatal("two sessions share a form token")
	}
	unchanged := func(what string) {
		t.Helper()
		if p.cancelAt(p.alice.ID) != "" || p.cancelAt(p.mallory.ID) != "" {
			t.Fatalf("%s: a subscription was changed", what)
		}
	}
	refused := func(what string, r pageResp, status int) {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: status %d, want %d\n%s", what, r.status, status, r.body)
		}
		r.secure(t)
		for _, leak := range []string{p.alice.ID, p.mallory.ID, "alice", "mallory", "Acme Widgets"} {
			if strings.Contains(r.body, leak) {
				t.Fatalf("%s: the page shows %q\n%s", what, leak, r.body)
			}
		}
		unchanged(what)
	}

	// Swapped ids: Mallory's session aims at Alice's subscription and
	// payment, with a valid form token of her own.
	refused("another customer's subscription", p.postForm(mallory+"/subscriptions/"+p.alice.ID+"/cancel", url.Values{"csrf_token": {malloryToken}}), 404)
	refused("an unknown subscription", p.postForm(mallory+"/subscriptions/sub_nope/cancel", url.Values{"csrf_token": {malloryToken}}), 404)
	refused("an unknown action", p.postForm(alice+"/subscriptions/"+p.alice.ID+"/delete", url.Values{"csrf_token": {aliceToken}}), 404)
	pays, err := p.c.ListPayments(p.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range pays.Data {
		if x.CustomerID != nil && *x.CustomerID == *p.alice.CustomerID {
			refused("another customer's receipt", p.page(mallory+"/payments/"+x.ID), 404)
		}
	}

	// CSRF: no token, another session's token, a foreign origin, a
	// cross-site fetch, and GET for a change.
	cancel := alice + "/subscriptions/" + p.alice.ID + "/cancel"
	refused("no token", p.postForm(cancel, url.Values{}), 403)
	refused("another session's token", p.postForm(cancel, url.Values{"csrf_token": {malloryToken}}), 403)
	refused("two tokens", p.postForm(cancel, url.Values{"csrf_token": {aliceToken, malloryToken}}), 403)
	refused("foreign origin", p.postForm(cancel, url.Values{"csrf_token": {aliceToken}}, "Sec-Fetch-Site", "", "Origin", "https://evil.example"), 403)
	refused("cross-site", p.postForm(cancel, url.Values{"csrf_token": {aliceToken}}, "Sec-Fetch-Site", "cross-site"), 403)
	if r := p.page(cancel); r.status == http.StatusSeeOther {
		t.Fatal("GET changed something")
	}
	unchanged("GET")

	// Tokens that open nothing: unknown, malformed, of the right length
	// but not base62, a session id in place of the token.
	for _, path := range []string{"/portal/" + id.Token(), "/portal/short", "/portal/" + strings.Repeat("-", id.TokenLen), "/portal/ps_x", "/portal/",
		"/portal/%00", "/portal/" + id.Token() + "/payments"} {
		refused("link "+path, p.page(path), 404)
	}

	// Replays: the same form twice does what one does (the token is one
	// per session; actions are idempotent).
	for range 2 {
		if r := p.postForm(cancel, url.Values{"csrf_token": {aliceToken}}); r.status != http.StatusSeeOther {
			t.Fatalf("cancel: %d\n%s", r.status, r.body)
		}
	}
	if p.cancelAt(p.alice.ID) == "" || p.cancelAt(p.mallory.ID) != "" {
		t.Fatal("replayed cancel: wrong subscriptions changed")
	}
	if r := p.postForm(alice+"/subscriptions/"+p.alice.ID+"/undo-cancel", url.Values{"csrf_token": {aliceToken}}); r.status != http.StatusSeeOther {
		t.Fatalf("undo: %d", r.status)
	}

	// Another merchant's session: its token opens its own customer only;
	// this merchant's ids through it are not found.
	otherPlan, other := setupPortalPlanElsewhere(p)
	if _, err := other.Pay(p.ctx, otherPlan, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "alice"}); err != nil {
		t.Fatal(err)
	}
	ops, err := other.CreatePortalSession(p.ctx, client.PortalSessionParams{ExternalCustomerID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := p.portalPath(ops)
	otherToken := csrf(t, p.page(elsewhere).body)
	refused("another merchant's token", p.postForm(elsewhere+"/subscriptions/"+p.alice.ID+"/cancel", url.Values{"csrf_token": {otherToken}}), 404)
	if pg := p.page(elsewhere); strings.Contains(pg.body, p.alice.ID) || strings.Contains(pg.body, "Acme Widgets") {
		t.Fatal("another merchant's session shows this merchant's data")
	}

	// A live-mode session of the same merchant and customer id sees no
	// test-mode data.
	if _, err := p.db.ExecContext(p.ctx, `INSERT INTO customers (merchant_id, mode, id, external_customer_id, created_at)
		VALUES ($1, 'live', 'cus_livealice0000000000000', 'alice', now())`, p.m); err != nil {
		t.Fatal(err)
	}
	_, liveKey := p.bundle.key(p.m, tenant.Live)
	lps, err := p.client(liveKey).CreatePortalSession(p.ctx, client.PortalSessionParams{ExternalCustomerID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	live := p.portalPath(lps)
	livePage := p.page(live)
	livePage.secure(t)
	livePage.has(t, []string{"You have no subscriptions"}, p.alice.ID, `id="test-mode"`)
	refused("a test subscription through a live session", p.postForm(live+"/subscriptions/"+p.alice.ID+"/cancel", url.Values{"csrf_token": {web.CSRFToken(strings.TrimPrefix(live, "/portal/"))}}), 404)

	// Expiry: by the merchant's test clock (an hour later), and by the
	// stored expiry.
	p.advance("61m")
	r := p.page(alice)
	refused("expired by the test clock", r, http.StatusGone)
	r.has(t, []string{"This link has expired"})
	refused("a post on an expired link", p.postForm(cancel, url.Values{"csrf_token": {aliceToken}}), http.StatusGone)
	if _, err := p.db.ExecContext(p.ctx, `UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, lps.ID); err != nil {
		t.Fatal(err)
	}
	refused("expired", p.page(live), http.StatusGone)
}

// The per-link and per-address rate limits answer 429 pages with the
// pages' headers.
func TestPortalRateLimit(t *testing.T) {
	t.Parallel()
	p := setupPortal(t, func(c *daemon.Config) {
		c.Limits = ratelimit.DefaultLimits()
		c.Limits[ratelimit.ClassWebSession] = 3
	})
	path := p.portalPath(p.session("alice"))
	for i := range 3 {
		if r := p.page(path); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := p.page(path)
	r.secure(t)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "Too many requests") {
		t.Fatalf("%d %v\n%s", r.status, r.header, r.body)
	}
	// Another link is counted apart.
	if r := p.page(p.portalPath(p.session("mallory"))); r.status != 200 {
		t.Fatalf("another link: %d", r.status)
	}

	q := setupPortal(t, func(c *daemon.Config) {
		c.Limits = ratelimit.DefaultLimits()
		c.Limits[ratelimit.ClassAnonymous] = 2
	})
	path = q.portalPath(q.session("alice"))
	q.page(path)
	q.page(path)
	r = q.page(path)
	r.secure(t)
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "Too many requests") {
		t.Fatalf("per address: %d\n%s", r.status, r.body)
	}
}

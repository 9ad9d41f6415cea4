package daemon_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/users"
)

func insecureHooks(c *daemon.Config) { c.AllowInsecureWebhooks = true }

// A user set up from an admin-made link signs in, makes a key (shown once)
// and uses it against /v1, revokes it, adds an endpoint (its secret shown
// once), switches mode, finds each change in the audit log, signs out.
func TestDashboardDevelopers(t *testing.T) {
	b := setup(t, insecureHooks)
	ctx := context.Background()
	m := b.merchant("Acme")
	c, err := users.Create(ctx, b.db, audit.AdminActor(), m, "ops@example.com", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	br := b.browser(t)
	a := br.get("/dashboard/setup/" + c.SetupToken)
	if a.status != 200 || !strings.Contains(a.body, "ops@example.com") {
		t.Fatalf("setup page: %d\n%s", a.status, a.body)
	}
	if a = br.post("/dashboard/setup/"+c.SetupToken, url.Values{"password": {"short"}, "confirm": {"short"}}); a.status != 400 || !strings.Contains(a.body, "at least 12") {
		t.Fatalf("short password: %d", a.status)
	}
	if a = br.post("/dashboard/setup/"+c.SetupToken, url.Values{"password": {dashPassword}, "confirm": {dashPassword}}); a.status != 200 || !strings.Contains(a.body, `id="sign-in"`) {
		t.Fatalf("setup: %d\n%s", a.status, a.body)
	}
	// The link is used up: a replay is refused, with or without a form.
	if a = br.get("/dashboard/setup/" + c.SetupToken); a.status != 404 || !strings.Contains(a.body, "setup-invalid") {
		t.Fatalf("replayed link: %d", a.status)
	}
	br.signIn("OPS@example.com")
	sess := br.cookie("tollgate_dashboard")
	if sess == nil || len(sess.Value) != 43 {
		t.Fatalf("session cookie %+v", sess)
	}
	a = br.get("/dashboard/developers")
	if !strings.Contains(a.body, `id="test-mode"`) {
		t.Fatal("test mode is not bannered")
	}
	if csp := a.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", a.header)
	}

	// A key, shown once, works against /v1 and shows its last use.
	a = br.post("/dashboard/keys", nil)
	k := newKeyRE.FindStringSubmatch(a.body)
	if a.status != 200 || k == nil || !strings.HasPrefix(k[1], "sk_test_") {
		t.Fatalf("create key: %d\n%s", a.status, a.body)
	}
	key := k[1]
	if st, _, body := b.raw("GET", "/v1/payments", key, ""); st != 200 {
		t.Fatalf("the new key: %d %s", st, body)
	}
	a = br.get("/dashboard/developers")
	if strings.Contains(a.body, key) || strings.Contains(a.body, key[len(key)-20:]) {
		t.Fatal("the key is shown a second time")
	}
	keyRow := a.body[strings.Index(a.body, `<tr id="key-`):]
	if !strings.Contains(keyRow[:strings.Index(keyRow, "</tr>")], time.Now().UTC().Format("2006-01-02")) {
		t.Fatalf("no last use: %s", keyRow[:strings.Index(keyRow, "</tr>")])
	}
	keyID := keyRow[len(`<tr id="key-`):strings.Index(keyRow, `">`)]
	if a = br.post("/dashboard/keys/"+keyID+"/revoke", nil); a.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", a.status, a.body)
	}
	if st, _, _ := b.raw("GET", "/v1/payments", key, ""); st != 401 {
		t.Fatalf("revoked key: %d", st)
	}

	// An endpoint: its secret once; then disabled and rotated.
	br.get("/dashboard/developers")
	a = br.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hooks"}})
	sec := newSecretRE.FindStringSubmatch(a.body)
	if a.status != 200 || sec == nil {
		t.Fatalf("add endpoint: %d\n%s", a.status, a.body)
	}
	epRow := a.body[strings.Index(a.body, `<tr id="endpoint-`):]
	epID := epRow[len(`<tr id="endpoint-`):strings.Index(epRow, `">`)]
	if a = br.post("/dashboard/webhooks/"+epID+"/disable", nil); a.status != http.StatusSeeOther {
		t.Fatalf("disable: %d", a.status)
	}
	a = br.get("/dashboard/developers")
	if strings.Contains(a.body, sec[1]) || !strings.Contains(a.body, "disabled") {
		t.Fatal("the secret is shown again, or the endpoint is not disabled")
	}
	if a = br.post("/dashboard/webhooks/"+epID+"/rotate", nil); a.status != 200 || newSecretRE.FindStringSubmatch(a.body) == nil {
		t.Fatalf("rotate: %d", a.status)
	}
	if a = br.post("/dashboard/webhooks", url.Values{"url": {"ftp://x"}}); a.status != 400 || !strings.Contains(a.body, "form-error") {
		t.Fatalf("bad url: %d", a.status)
	}

	// The mode switch: live data, unbannered; no test keys shown.
	br.get("/dashboard")
	if a = br.post("/dashboard/mode", url.Values{"mode": {"live"}}); a.status != http.StatusSeeOther {
		t.Fatalf("mode: %d", a.status)
	}
	if a = br.get("/dashboard/developers"); strings.Contains(a.body, `id="test-mode"`) || strings.Contains(a.body, keyID) {
		t.Fatal("live mode shows test data or the banner")
	}

	a = br.get("/dashboard/audit")
	for _, want := range []string{users.ActionSetup, users.ActionSignIn, audit.KeyCreate, audit.KeyRevoke, audit.EndpointCreate, audit.EndpointDisable, audit.EndpointRotate} {
		if !strings.Contains(a.body, ">"+want+"<") {
			t.Errorf("audit page lacks %s", want)
		}
	}
	if strings.Contains(a.body, key) || strings.Contains(a.body, sec[1]) {
		t.Error("a secret in the audit log")
	}

	br.get("/dashboard")
	if a = br.post("/dashboard/sign-out", nil); a.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", a.status)
	}
	if _, err := users.Authenticate(ctx, b.db, sess.Value, time.Now()); err == nil {
		t.Fatal("the session outlived sign-out")
	}
}

// The dashboard attacked: fixation, cross-origin and tokenless posts,
// another merchant's ids, a disabled user's live session, brute force,
// framing.
func TestDashboardAttacks(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	mA, mB := b.merchant("A"), b.merchant("B")
	b.dashUser(t, mA, "a@example.com")
	uB := b.dashUser(t, mB, "b@example.com")
	keyB, secretB := b.key(mB, tenant.Test)

	// Session fixation: a planted cookie is never the session.
	br := b.browser(t)
	u, _ := url.Parse(b.url + "/dashboard")
	br.c.Jar.SetCookies(u, []*http.Cookie{{Name: "tollgate_dashboard", Value: strings.Repeat("F", 43), Path: "/dashboard"}})
	br.signIn("a@example.com")
	if c := br.cookie("tollgate_dashboard"); c == nil || c.Value == strings.Repeat("F", 43) {
		t.Fatal("the planted session token was kept")
	}

	// Another merchant's key by id: not found, and it still works.
	br.get("/dashboard/developers")
	if a := br.post("/dashboard/keys/"+keyB+"/revoke", nil); a.status != 404 {
		t.Fatalf("revoking B's key from A: %d", a.status)
	}
	if st, _, _ := b.raw("GET", "/v1/payments", secretB, ""); st != 200 {
		t.Fatalf("B's key after A's attempt: %d", st)
	}
	for _, action := range []string{"disable", "enable", "rotate"} {
		br.get("/dashboard/developers")
		if a := br.post("/dashboard/webhooks/we_nope/"+action, nil); a.status != 404 {
			t.Errorf("%s of an unknown endpoint: %d", action, a.status)
		}
	}

	// CSRF: another origin with the right token, and this origin without
	// one, are both refused; nothing is made.
	br.get("/dashboard/developers")
	tok := br.token()
	if a := br.do("POST", "/dashboard/keys", url.Values{"csrf_token": {tok}}, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}); a.status != 403 {
		t.Fatalf("cross-origin post: %d", a.status)
	}
	if a := br.do("POST", "/dashboard/keys", url.Values{}, nil); a.status != 403 {
		t.Fatalf("post without a token: %d", a.status)
	}
	if a := br.do("POST", "/dashboard/keys", url.Values{"csrf_token": {tok + "x"}}, nil); a.status != 403 {
		t.Fatalf("post with a wrong token: %d", a.status)
	}
	other := b.browser(t)
	other.get("/dashboard/sign-in")
	if a := other.do("POST", "/dashboard/sign-in", url.Values{"csrf_token": {tok}, "email": {"a@example.com"}, "password": {dashPassword}}, nil); a.status != 403 {
		t.Fatalf("sign-in with another session's token: %d", a.status)
	}
	if a := b.browser(t).do("POST", "/dashboard/sign-in", url.Values{"email": {"a@example.com"}, "password": {dashPassword}}, nil); a.status != 403 {
		t.Fatalf("sign-in without the form: %d", a.status)
	}

	// A disabled user's open session ends at once.
	brB := b.browser(t)
	brB.signIn("b@example.com")
	if _, err := users.Disable(ctx, b.db, audit.AdminActor(), "", uB.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if a := brB.get("/dashboard"); a.status != http.StatusSeeOther || !strings.HasSuffix(a.header.Get("Location"), "/dashboard/sign-in") {
		t.Fatalf("disabled user's session: %d", a.status)
	}

	// Brute force: ten wrong passwords lock the email, even for the right one.
	bf := b.browser(t)
	for i := range users.MaxFailures {
		bf.get("/dashboard/sign-in")
		if a := bf.post("/dashboard/sign-in", url.Values{"email": {"a@example.com"}, "password": {"guess " + string(rune('a'+i))}}); a.status != 401 {
			t.Fatalf("guess %d: %d", i, a.status)
		}
	}
	bf.get("/dashboard/sign-in")
	if a := bf.post("/dashboard/sign-in", url.Values{"email": {"a@example.com"}, "password": {dashPassword}}); a.status != 429 || !strings.Contains(a.body, "locked") {
		t.Fatalf("the right password while locked: %d", a.status)
	}

	// Every page refuses frames.
	for _, p := range []string{"/dashboard/sign-in", "/dashboard/setup/nope", "/dashboard/nothing"} {
		a := b.browser(t).get(p)
		if !strings.Contains(a.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || a.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %v", p, a.header)
		}
	}
	// Cookie attributes.
	req, _ := http.NewRequest("GET", b.url+"/dashboard/sign-in", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") || strings.Contains(sc, "Secure") {
		t.Fatalf("cookie over http: %s", sc)
	}
}

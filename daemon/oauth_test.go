package daemon_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// The discovery documents say what RFC 8414 and RFC 9728 require and what
// MCP clients look for, with the daemon's base URL as issuer.
func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.BaseURL = "" })
	var as map[string]any
	status, h, body := b.raw("GET", "/.well-known/oauth-authorization-server", "", "")
	if status != 200 || json.Unmarshal([]byte(body), &as) != nil {
		t.Fatalf("authorization server metadata: %d %s", status, body)
	}
	if h.Get("Access-Control-Allow-Origin") != "*" || h.Get("wc-version") == "" {
		t.Errorf("metadata headers: %v", h)
	}
	want := map[string]any{
		"issuer":                                         b.url,
		"authorization_endpoint":                         b.url + "/oauth/authorize",
		"token_endpoint":                                 b.url + "/oauth/token",
		"registration_endpoint":                          b.url + "/oauth/register",
		"revocation_endpoint":                            b.url + "/oauth/revoke",
		"code_challenge_methods_supported":               []any{"S256"},
		"response_types_supported":                       []any{"code"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []any{"none"},
		"scopes_supported":                               []any{"billing:read", "billing:write"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          true,
	}
	for k, v := range want {
		if got, _ := json.Marshal(as[k]); string(got) != mustJSON(v) {
			t.Errorf("%s = %s, want %s", k, got, mustJSON(v))
		}
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp"} {
		var pr map[string]any
		status, _, body := b.raw("GET", path, "", "")
		if status != 200 || json.Unmarshal([]byte(body), &pr) != nil {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		if pr["resource"] != b.url+"/api/mcp" || mustJSON(pr["authorization_servers"]) != mustJSON([]string{b.url}) ||
			mustJSON(pr["bearer_methods_supported"]) != `["header"]` || mustJSON(pr["scopes_supported"]) != `["billing:read","billing:write"]` {
			t.Errorf("%s: %s", path, body)
		}
	}
	// Browser-based clients preflight the endpoints they call.
	status, h, _ = b.raw("OPTIONS", "/oauth/token", "", "")
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: %d %v", status, h)
	}
	// The OpenID configuration some clients also try is not served.
	if status, _, _ := b.raw("GET", "/.well-known/openid-configuration", "", ""); status != http.StatusNotFound {
		t.Errorf("openid-configuration: %d", status)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Dynamic registration admits public clients whose redirect URIs are https
// or loopback http, and refuses everything else with RFC 7591 errors.
func TestOAuthRegistration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good := []string{
		`{"redirect_uris":["https://app.example.com/cb"],"client_name":"Claude"}`,
		`{"redirect_uris":["http://127.0.0.1:33418/callback","http://localhost/cb","http://[::1]:9/cb"]}`,
		// A client asking for a secret is registered as public: none.
		`{"redirect_uris":["https://x.example/cb"],"token_endpoint_auth_method":"client_secret_basic","grant_types":["authorization_code","refresh_token"],"logo_uri":"https://x.example/l.png"}`,
	}
	for _, body := range good {
		status, h, m := b.post("/oauth/register", "application/json", body)
		if status != http.StatusCreated || !strings.HasPrefix(m["client_id"].(string), "tgc_") || m["token_endpoint_auth_method"] != "none" || m["client_secret"] != nil {
			t.Fatalf("register %s: %d %v", body, status, m)
		}
		if h.Get("Cache-Control") != "no-store" || m["client_id_issued_at"] == nil {
			t.Errorf("register answer: %v %v", h, m)
		}
		var sent struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.Unmarshal([]byte(body), &sent)
		if mustJSON(m["redirect_uris"]) != mustJSON(sent.RedirectURIs) {
			t.Errorf("redirect_uris %v, sent %v", m["redirect_uris"], sent.RedirectURIs)
		}
	}
	bad := map[string]string{
		`{"redirect_uris":["http://app.example.com/cb"]}`:                                             "invalid_redirect_uri",
		`{"redirect_uris":["https://app.example.com/cb#frag"]}`:                                       "invalid_redirect_uri",
		`{"redirect_uris":["javascript:alert(1)"]}`:                                                   "invalid_redirect_uri",
		`{"redirect_uris":["myapp://callback"]}`:                                                      "invalid_redirect_uri",
		`{"redirect_uris":["https://user:pw@app.example.com/cb"]}`:                                    "invalid_redirect_uri",
		`{"redirect_uris":["/relative"]}`:                                                             "invalid_redirect_uri",
		`{"redirect_uris":[]}`:                                                                        "invalid_redirect_uri",
		`{"client_name":"no uris"}`:                                                                   "invalid_redirect_uri",
		`{"redirect_uris":"https://app.example.com/cb"}`:                                              "invalid_client_metadata",
		`{"redirect_uris":["https://a.example/cb"],"grant_types":["client_credentials"]}`:             "invalid_client_metadata",
		`{"redirect_uris":["https://a.example/cb"],"response_types":["token"]}`:                       "invalid_client_metadata",
		`{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("n", 101) + `"}`: "invalid_client_metadata",
		`[]`:       "invalid_client_metadata",
		`not json`: "invalid_client_metadata",
	}
	for body, code := range bad {
		status, _, m := b.post("/oauth/register", "application/json", body)
		if status != http.StatusBadRequest || m["error"] != code || m["error_description"] == "" {
			t.Errorf("register %s: %d %v, want 400 %s", body, status, m, code)
		}
	}
	many := `{"redirect_uris":[` + strings.TrimSuffix(strings.Repeat(`"https://a.example/cb",`, 11), ",") + `]}`
	if status, _, m := b.post("/oauth/register", "application/json", many); status != 400 || m["error"] != "invalid_redirect_uri" {
		t.Errorf("11 redirect URIs: %d %v", status, m)
	}
	if status, _, m := b.post("/oauth/register", "text/plain", good[0]); status != 400 || m["error"] != "invalid_client_metadata" {
		t.Errorf("text/plain body: %d %v", status, m)
	}
	huge := `{"redirect_uris":["https://a.example/cb"],"x":"` + strings.Repeat("x", 20<<10) + `"}`
	if status, _, m := b.post("/oauth/register", "application/json", huge); status != 400 || m["error"] != "invalid_client_metadata" {
		t.Errorf("oversized body: %d %v", status, m)
	}
}

// The consent page as a browser sees it: the client's name and redirect
// host, a key field, read-only and read-write choices, the security headers,
// and a redirect with code, state and iss after consent.
func TestOAuthConsentPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	c := b.register(t, "http://127.0.0.1:49152/callback")
	q := c.authorizeQuery(nil)
	resp, page := c.get(q)
	if resp.StatusCode != 200 {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	h := resp.Header
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "default-src 'none'", "form-action 'self' http://127.0.0.1:49152"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("page headers: %v", h)
	}
	for _, want := range []string{"Test Host", "127.0.0.1:49152", `name="secret_key"`, `type="password"`, `value="read"`, `value="write"`,
		`<label for="secret_key">`, `<legend>Access</legend>`, `name="viewport"`, `lang="en"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && strings.Contains(page, "<link") {
		t.Error("the page loads scripts or external assets")
	}
	resp, body := c.submit(page, map[string]string{"secret_key": key, "access": "write", "decision": "allow"})
	back := c.redirected(resp, body)
	if !strings.HasPrefix(back.Get("code"), "tgac_") || back.Get("state") != q.Get("state") || back.Get("iss") != b.url {
		t.Fatalf("redirect query: %v", back)
	}
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the form: %d, want 303", resp.StatusCode)
	}
}

// Deny, a wrong or revoked key, read-only access and a forged or stale
// form: each answered as the merchant and the client expect.
func TestOAuthConsentDecisions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, keyID, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	probe := b.probe(t)

	// Deny: back to the client with access_denied, state and iss.
	q := c.authorizeQuery(nil)
	_, page := c.get(q)
	resp, body := c.submit(page, map[string]string{"decision": "deny"})
	back := c.redirected(resp, body)
	if back.Get("error") != "access_denied" || back.Get("state") != q.Get("state") || back.Get("iss") != b.url || back.Get("code") != "" {
		t.Fatalf("deny: %v", back)
	}

	// A wrong key shows the form again with an alert, and no code.
	_, page = c.get(c.authorizeQuery(nil))
	resp, body = c.submit(page, map[string]string{"secret_key": "sk_test_" + strings.Repeat("x", 43), "decision": "allow"})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "not valid") || resp.Header.Get("Location") != "" {
		t.Fatalf("wrong key: %d %s", resp.StatusCode, body)
	}
	// The page shown again still works.
	resp, body = c.submit(body, map[string]string{"secret_key": key, "decision": "allow"})
	if c.redirected(resp, body).Get("code") == "" {
		t.Fatal("no code after correcting the key")
	}

	// Read-only: the token carries billing:read alone and a write tool is
	// refused with insufficient_scope.
	access, _ := c.tokens(key, "read")
	status, _, m := call(t, probe, access, "billing:read")
	if status != 200 || mustJSON(m["scopes"]) != `["billing:read"]` {
		t.Fatalf("read-only token on a read tool: %d %v", status, m)
	}
	status, challenge, m := call(t, probe, access, "billing:write")
	if status != http.StatusForbidden || !strings.HasPrefix(challenge, `Bearer error="insufficient_scope", scope="billing:write"`) ||
		mustJSON(m["error"]) != `{"code":"insufficient_scope","message":"the access token does not grant billing:write; authorize the client again with read and write access"}` {
		t.Fatalf("read-only token on a write tool: %d %q %v", status, challenge, m)
	}

	// A client asking for billing:read is offered nothing more.
	_, page = c.get(c.authorizeQuery(map[string]string{"scope": "billing:read"}))
	if strings.Contains(page, `value="write"`) {
		t.Error("read-only request offers write")
	}
	resp, body = c.submit(page, map[string]string{"secret_key": key, "access": "write", "decision": "allow"})
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "read-only") {
		t.Errorf("write forced on a read-only request: %d", resp.StatusCode)
	}

	// A revoked key cannot consent.
	if err := revokeKey(b, keyID); err != nil {
		t.Fatal(err)
	}
	_, page = c.get(c.authorizeQuery(nil))
	resp, body = c.submit(page, map[string]string{"secret_key": key, "decision": "allow"})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "revoked") {
		t.Errorf("revoked key: %d", resp.StatusCode)
	}
}

// The consent form refuses cross-site posts and posts without the page's
// CSRF token; neither yields a code.
func TestOAuthConsentCSRF(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	_, page := c.get(c.authorizeQuery(nil))
	form := formFields(t, page)
	form.Set("secret_key", key)
	form.Set("decision", "allow")

	send := func(browser *http.Client, f url.Values, headers map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, b.url+"/oauth/authorize", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	// Another site posting the form in the merchant's browser.
	resp, _ := send(c.browser, form, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
		t.Fatalf("cross-site post: %d", resp.StatusCode)
	}
	// A post without the cookie (a browser that never saw the page).
	resp, body := send(newBrowser(), form, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" || !strings.Contains(body, "expired") {
		t.Fatalf("post without the CSRF cookie: %d", resp.StatusCode)
	}
	// A post with the cookie but a made-up token.
	forged := url.Values{}
	for k, v := range form {
		forged[k] = slices.Clone(v)
	}
	forged.Set("csrf_token", strings.Repeat("A", 43))
	resp, _ = send(c.browser, forged, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
		t.Fatalf("post with a forged token: %d", resp.StatusCode)
	}
	// The genuine form still works.
	resp, body = send(c.browser, form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.url})
	if c.redirected(resp, body).Get("code") == "" {
		t.Fatal("genuine form refused")
	}
}

// Authorization requests the client and redirect URI of which cannot be
// trusted get an error page, never a redirect; the rest are redirected back
// with the RFC 6749 error.
func TestOAuthAuthorizeErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.register(t, "http://127.0.0.1:8765/cb")
	page := []map[string]string{
		{"client_id": "tgc_unknown"},
		{"client_id": ""},
		{"redirect_uri": "https://evil.example/cb"},
		{"redirect_uri": "http://127.0.0.1:8765/other"},
	}
	for _, over := range page {
		resp, body := c.get(c.authorizeQuery(over))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, `role="alert"`) ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("%v: %d %q", over, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	redirected := []struct {
		over map[string]string
		code string
	}{
		{map[string]string{"response_type": "token"}, "unsupported_response_type"},
		{map[string]string{"response_type": ""}, "invalid_request"},
		{map[string]string{"code_challenge": ""}, "invalid_request"},
		{map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
		{map[string]string{"code_challenge_method": ""}, "invalid_request"},
		{map[string]string{"code_challenge": "short"}, "invalid_request"},
		{map[string]string{"scope": "admin"}, "invalid_scope"},
		{map[string]string{"resource": "https://other.example/api/mcp"}, "invalid_target"},
	}
	for _, tc := range redirected {
		q := c.authorizeQuery(tc.over)
		resp, _ := c.get(q)
		back := c.redirected(resp, "")
		if back.Get("error") != tc.code || back.Get("iss") != b.url || back.Get("state") != q.Get("state") {
			t.Errorf("%v: %v, want %s", tc.over, back, tc.code)
		}
	}
	// A loopback redirect URI matches on any port (RFC 8252 §7.3).
	resp, _ := c.get(c.authorizeQuery(map[string]string{"redirect_uri": "http://127.0.0.1:40001/cb"}))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("loopback on another port: %d", resp.StatusCode)
	}
	// With one registered URI the request may leave it out.
	resp, _ = c.get(c.authorizeQuery(map[string]string{"redirect_uri": ""}))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("no redirect_uri: %d", resp.StatusCode)
	}
	// A parameter given twice is refused.
	q := c.authorizeQuery(nil)
	q.Add("state", "again")
	resp, _ = c.get(q)
	if back := c.redirected(resp, ""); back.Get("error") != "invalid_request" {
		t.Errorf("duplicate state: %v", back)
	}
}

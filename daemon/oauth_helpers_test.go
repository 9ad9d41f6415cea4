package daemon_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Helpers of the OAuth tests: a client that registers, walks a browser
// through the consent page and calls the token endpoint, as an MCP host does.

// pkce returns a fresh S256 verifier and its challenge.
func pkce() (string, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// oauthClient is one registered client and the browser its user drives.
type oauthClient struct {
	t        *testing.T
	b        *bundle
	id       string
	redirect string
	verifier string
	browser  *http.Client
}

// newBrowser is an HTTP client with cookies that does not follow redirects,
// so the test sees where the consent page sends it.
func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// post sends a request body of content type ct and decodes a JSON answer.
func (b *bundle) post(path, ct, body string) (int, http.Header, map[string]any) {
	b.t.Helper()
	resp, err := http.Post(b.url+path, ct, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			b.t.Fatalf("%s answered %d with non-JSON %q", path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, resp.Header, m
}

// register registers a client with redirect and returns it.
func (b *bundle) register(t *testing.T, redirect string) *oauthClient {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Test Host", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"})
	status, _, m := b.post("/oauth/register", "application/json", string(body))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, m)
	}
	return &oauthClient{t: t, b: b, id: m["client_id"].(string), redirect: redirect, browser: newBrowser()}
}

// authorizeQuery is a complete, valid authorization request; over replaces
// or (with "") removes parameters.
func (c *oauthClient) authorizeQuery(over map[string]string) url.Values {
	verifier, challenge := pkce()
	c.verifier = verifier
	q := url.Values{
		"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect}, "state": {"st-" + verifier[:8]},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"billing:read billing:write"},
		"resource": {c.b.url + "/api/mcp"},
	}
	for k, v := range over {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return q
}

// get fetches the authorization endpoint with q in the browser.
func (c *oauthClient) get(q url.Values) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.browser.Get(c.b.url + "/oauth/authorize?" + q.Encode())
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// submit fills the consent page's form with fields and posts it as a
// browser does: same-origin headers, the page's cookie, every input the page
// holds (hidden ones included), and the button pressed.
func (c *oauthClient) submit(page string, fields map[string]string) (*http.Response, string) {
	c.t.Helper()
	form := formFields(c.t, page)
	for k, v := range fields {
		form.Set(k, v)
	}
	req, _ := http.NewRequest(http.MethodPost, c.b.url+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.b.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.browser.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// formFields parses the page's form: each named input with its value, the
// checked radio of each group, and nothing for buttons (the pressed one is
// added by the caller).
func formFields(t *testing.T, page string) url.Values {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out := url.Values{}
	forms := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "form" {
			forms++
		}
		if n.Type == html.ElementNode && n.Data == "input" {
			a := map[string]string{}
			checked := false
			for _, at := range n.Attr {
				a[at.Key] = at.Val
				if at.Key == "checked" {
					checked = true
				}
			}
			if a["type"] != "radio" || checked {
				out.Set(a["name"], a["value"])
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	if forms != 1 {
		t.Fatalf("want one form on the consent page, found %d:\n%s", forms, page)
	}
	return out
}

// consent walks the browser through the page with key and access and
// returns the redirect's query (code, state, iss or error).
func (c *oauthClient) consent(q url.Values, key, access string) url.Values {
	c.t.Helper()
	resp, page := c.get(q)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	resp, body := c.submit(page, map[string]string{"secret_key": key, "access": access, "decision": "allow"})
	return c.redirected(resp, body)
}

// redirected asserts resp sends the browser back to the client and returns
// the query it carries.
func (c *oauthClient) redirected(resp *http.Response, body string) url.Values {
	c.t.Helper()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		c.t.Fatalf("want a redirect to the client, got %d: %s", resp.StatusCode, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), c.redirect) {
		c.t.Fatalf("redirect to %q, want under %q", resp.Header.Get("Location"), c.redirect)
	}
	return loc.Query()
}

// code runs authorization with a key of the given access and returns the
// code, with the verifier kept for the exchange.
func (c *oauthClient) code(key, access string) string {
	c.t.Helper()
	q := c.consent(c.authorizeQuery(nil), key, access)
	if q.Get("code") == "" {
		c.t.Fatalf("no code: %v", q)
	}
	return q.Get("code")
}

// exchange posts an authorization_code request; over changes parameters.
func (c *oauthClient) exchange(code string, over map[string]string) (int, map[string]any) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect},
		"code_verifier": {c.verifier}, "client_id": {c.id}, "resource": {c.b.url + "/api/mcp"}}
	return c.token(form, over)
}

// refresh posts a refresh_token request.
func (c *oauthClient) refresh(refreshToken string, over map[string]string) (int, map[string]any) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {c.id}}
	return c.token(form, over)
}

func (c *oauthClient) token(form url.Values, over map[string]string) (int, map[string]any) {
	c.t.Helper()
	for k, v := range over {
		if v == "" {
			form.Del(k)
		} else {
			form.Set(k, v)
		}
	}
	status, h, m := c.b.post("/oauth/token", "application/x-www-form-urlencoded", form.Encode())
	if h.Get("Cache-Control") != "no-store" {
		c.t.Errorf("token endpoint answer without Cache-Control: no-store")
	}
	return status, m
}

// tokens runs the whole flow and returns access and refresh tokens.
func (c *oauthClient) tokens(key, access string) (string, string) {
	c.t.Helper()
	status, m := c.exchange(c.code(key, access), nil)
	if status != http.StatusOK {
		c.t.Fatalf("exchange: %d %v", status, m)
	}
	return m["access_token"].(string), m["refresh_token"].(string)
}

// oauthErr asserts a token endpoint answer is the RFC 6749 error code.
func oauthErr(t *testing.T, status int, m map[string]any, wantStatus int, code string) {
	t.Helper()
	if status != wantStatus || m["error"] != code {
		t.Fatalf("want %d %s, got %d %v", wantStatus, code, status, m)
	}
}

// probe is a stand-in for the tool server: it authenticates each request
// with the daemon's AuthenticateMCP, checks the scope named by ?need=, and
// answers 200 with who the request acts for or the daemon's refusal.
func (b *bundle) probe(t *testing.T) string {
	t.Helper()
	s := b.d.Server
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.AuthenticateMCP(r)
		if err == nil && r.URL.Query().Get("need") != "" {
			err = s.RequireScope(p, r.URL.Query().Get("need"))
		}
		if err != nil {
			s.WriteBearerError(w, r, err)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"merchant": p.MerchantID, "mode": p.Mode, "key": p.KeyID, "scopes": p.Scopes, "client": p.ClientID})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// call sends a bearer token to the probe and returns status, challenge and
// body.
func call(t *testing.T, probeURL, token, need string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, probeURL+"/api/mcp?need="+url.QueryEscape(need), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), m
}

// merchantKey makes a merchant with a test key and returns ids and key.
func (b *bundle) merchantKey() (merchantID, keyID, key string) {
	merchantID = b.merchant("acme")
	keyID, key = b.key(merchantID, tenant.Test)
	return merchantID, keyID, key
}

package daemon_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/auth"
)

func revokeKey(b *bundle, keyID string) error {
	return auth.RevokeKey(context.Background(), b.db, keyID)
}

// The code exchange: PKCE S256, single use, short-lived, bound to client,
// redirect URI and resource; the token it yields acts for the merchant and
// mode of the key that consented.
func TestOAuthCodeExchange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	merchantID, keyID, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	other := b.register(t, "https://host.example/cb")
	probe := b.probe(t)

	code := c.code(key, "write")
	bad := []struct {
		name   string
		over   map[string]string
		status int
		code   string
	}{
		{"wrong verifier", map[string]string{"code_verifier": strings.Repeat("v", 43)}, 400, "invalid_grant"},
		{"short verifier", map[string]string{"code_verifier": "abc"}, 400, "invalid_grant"},
		{"no verifier", map[string]string{"code_verifier": ""}, 400, "invalid_request"},
		{"other client", map[string]string{"client_id": other.id}, 400, "invalid_grant"},
		{"no client", map[string]string{"client_id": ""}, 400, "invalid_request"},
		{"redirect_uri mismatch", map[string]string{"redirect_uri": "https://host.example/other"}, 400, "invalid_grant"},
		{"redirect_uri left out", map[string]string{"redirect_uri": ""}, 400, "invalid_grant"},
		{"resource mismatch", map[string]string{"resource": "https://other.example/api/mcp"}, 400, "invalid_target"},
		{"unknown code", map[string]string{"code": "tgac_" + strings.Repeat("x", 43)}, 400, "invalid_grant"},
		{"malformed code", map[string]string{"code": "nope"}, 400, "invalid_grant"},
		{"password grant", map[string]string{"grant_type": "password"}, 400, "unsupported_grant_type"},
	}
	// None of these spends the code.
	for _, tc := range bad {
		status, m := c.exchange(code, tc.over)
		if status != tc.status || m["error"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, m, tc.status, tc.code)
		}
	}
	status, m := c.exchange(code, nil)
	if status != 200 || m["token_type"] != "Bearer" || m["scope"] != "billing:read billing:write" || m["expires_in"].(float64) != 3600 ||
		!strings.HasPrefix(m["access_token"].(string), "tgat_") || !strings.HasPrefix(m["refresh_token"].(string), "tgrt_") {
		t.Fatalf("exchange: %d %v", status, m)
	}
	access := m["access_token"].(string)
	status, _, who := call(t, probe, access, "billing:write")
	if status != 200 || who["merchant"] != merchantID || who["mode"] != "test" || who["key"] != keyID || who["client"] != c.id {
		t.Fatalf("token acts for %v (%d)", who, status)
	}
	// Only hashes are stored.
	var n int
	if err := b.db.Get(&n, `SELECT count(*) FROM oauth_tokens WHERE token_hash = convert_to($1, 'UTF8')`, access); err != nil || n != 0 {
		t.Fatalf("token stored in clear: %d %v", n, err)
	}

	// Code reuse: refused, and the tokens the code issued are revoked.
	status, m = c.exchange(code, nil)
	oauthErr(t, status, m, 400, "invalid_grant")
	if status, challenge, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Fatalf("token of a replayed code still works: %d %q", status, challenge)
	}

	// An expired code is refused.
	code = c.code(key, "read")
	if _, err := b.db.Exec(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	status, m = c.exchange(code, nil)
	if status != 400 || m["error"] != "invalid_grant" || !strings.Contains(m["error_description"].(string), "expired") {
		t.Fatalf("expired code: %d %v", status, m)
	}

	// The Go oauth2 package first sends the client id as Basic credentials
	// with an empty password: accepted. A password is not.
	code = c.code(key, "read")
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect}, "code_verifier": {c.verifier}}
	req, _ := http.NewRequest("POST", b.url+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.id), "secret")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("Basic with a password: %v %v", resp, err)
	}
	req, _ = http.NewRequest("POST", b.url+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.id), "")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("Basic with the client id alone: %v %v", resp, err)
	}
	// JSON bodies are not token requests.
	status, _, m = b.post("/oauth/token", "application/json", `{"grant_type":"authorization_code"}`)
	oauthErr(t, status, m, 400, "invalid_request")
}

// Refresh tokens rotate on use; presenting a spent one revokes the whole
// family, including the tokens issued after it.
func TestOAuthRefreshRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	probe := b.probe(t)
	access1, refresh1 := c.tokens(key, "write")

	status, m := c.refresh(refresh1, nil)
	if status != 200 || m["refresh_token"] == refresh1 || m["access_token"] == access1 {
		t.Fatalf("refresh: %d %v", status, m)
	}
	access2, refresh2 := m["access_token"].(string), m["refresh_token"].(string)
	// Narrowing: a read-only access token, while the refresh token keeps
	// the grant's scopes.
	status, m = c.refresh(refresh2, map[string]string{"scope": "billing:read"})
	if status != 200 || m["scope"] != "billing:read" {
		t.Fatalf("narrowed refresh: %d %v", status, m)
	}
	access3, refresh3 := m["access_token"].(string), m["refresh_token"].(string)
	if status, _, _ := call(t, probe, access3, "billing:write"); status != 403 {
		t.Errorf("narrowed token on a write tool: %d", status)
	}
	status, m = c.refresh(refresh3, map[string]string{"scope": "billing:read billing:write"})
	if status != 200 || m["scope"] != "billing:read billing:write" {
		t.Fatalf("refresh back to the grant's scopes: %d %v", status, m)
	}
	access4, refresh4 := m["access_token"].(string), m["refresh_token"].(string)
	// Wrong client: refused, nothing revoked.
	status, m = c.refresh(refresh4, map[string]string{"client_id": "tgc_other"})
	oauthErr(t, status, m, 400, "invalid_grant")
	for _, tok := range []string{access1, access2, access4} {
		if status, _, _ := call(t, probe, tok, ""); status != 200 {
			t.Fatalf("live token refused before reuse: %d", status)
		}
	}
	// Reuse of refresh1: refused, and every token of the family dies.
	status, m = c.refresh(refresh1, nil)
	oauthErr(t, status, m, 400, "invalid_grant")
	for _, tok := range []string{access1, access2, access4} {
		status, challenge, _ := call(t, probe, tok, "")
		if status != 401 || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "revoked") {
			t.Fatalf("token survived reuse detection: %d %q", status, challenge)
		}
	}
	status, m = c.refresh(refresh4, nil)
	oauthErr(t, status, m, 400, "invalid_grant")
	var reason string
	if err := b.db.Get(&reason, `SELECT revoked_reason FROM oauth_grants`); err != nil || reason != "refresh_token_reuse" {
		t.Fatalf("grant revocation reason %q %v", reason, err)
	}
	// Another grant of the same client and merchant is untouched.
	access5, _ := c.tokens(key, "read")
	if status, _, _ := call(t, probe, access5, ""); status != 200 {
		t.Errorf("a separate grant died too: %d", status)
	}
}

// Two clients racing to refresh with one token: exactly one wins, and the
// other's attempt counts as reuse.
func TestOAuthRefreshRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	_, refresh := c.tokens(key, "write")
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {c.id}}
			resp, err := http.Post(b.url+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			if err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == 200 {
			ok++
		} else if s != 400 {
			t.Errorf("status %d", s)
		}
	}
	if ok != 1 {
		t.Fatalf("%d refreshes succeeded with one token: %v", ok, statuses)
	}
}

// Revocation (RFC 7009) and the things that end tokens: a revoked API key,
// an expired token, a token for another resource.
func TestOAuthRevocation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, keyID, key := b.merchantKey()
	c := b.register(t, "https://host.example/cb")
	probe := b.probe(t)
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	revoke := func(body string) (int, map[string]any) {
		status, _, m := b.post("/oauth/revoke", "application/x-www-form-urlencoded", body)
		return status, m
	}

	// An access token alone.
	access, refresh := c.tokens(key, "write")
	if status, _ := revoke(form("token", access, "token_type_hint", "access_token", "client_id", c.id)); status != 200 {
		t.Fatalf("revoke access token: %d", status)
	}
	if status, ch, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(ch, "revoked") {
		t.Fatalf("revoked access token: %d %q", status, ch)
	}
	// Its refresh token still works; revoking that ends the grant.
	status, m := c.refresh(refresh, nil)
	if status != 200 {
		t.Fatalf("refresh after revoking the access token: %d %v", status, m)
	}
	access2, refresh2 := m["access_token"].(string), m["refresh_token"].(string)
	if status, m := revoke(form("token", refresh2, "client_id", "tgc_someone_else")); status != 400 || m["error"] != "unauthorized_client" {
		t.Fatalf("revoke another client's token: %d %v", status, m)
	}
	if status, _ := revoke(form("token", refresh2)); status != 200 {
		t.Fatal("revoke refresh token")
	}
	if status, _, _ := call(t, probe, access2, ""); status != 401 {
		t.Fatal("access token outlived its revoked refresh token")
	}
	status, m = c.refresh(refresh2, nil)
	oauthErr(t, status, m, 400, "invalid_grant")
	// Unknown tokens are not an error; a missing one is.
	if status, _ := revoke(form("token", "tgat_"+strings.Repeat("z", 43))); status != 200 {
		t.Errorf("unknown token: %d", status)
	}
	if status, m := revoke(form("client_id", c.id)); status != 400 || m["error"] != "invalid_request" {
		t.Errorf("no token: %d %v", status, m)
	}

	// Expired access token.
	access, refresh = c.tokens(key, "write")
	if _, err := b.db.Exec(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'access'`); err != nil {
		t.Fatal(err)
	}
	if status, ch, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, "expired") {
		t.Fatalf("expired token: %d %q", status, ch)
	}
	// Wrong audience: a token bound to another resource.
	status, m = c.refresh(refresh, nil)
	if status != 200 {
		t.Fatal(m)
	}
	access, refresh = m["access_token"].(string), m["refresh_token"].(string)
	if _, err := b.db.Exec(`UPDATE oauth_grants SET resource = 'https://elsewhere.example/api/mcp'`); err != nil {
		t.Fatal(err)
	}
	if status, ch, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(ch, "another resource") {
		t.Fatalf("wrong audience: %d %q", status, ch)
	}
	if _, err := b.db.Exec(`UPDATE oauth_grants SET resource = $1`, b.url+"/api/mcp"); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := call(t, probe, access, ""); status != 200 {
		t.Fatal("token refused for its own resource")
	}
	// Revoking the API key that consented ends every token issued through
	// it, on the next request, and refreshing with them.
	if err := revokeKey(b, keyID); err != nil {
		t.Fatal(err)
	}
	if status, ch, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(ch, "revoked") {
		t.Fatalf("token of a revoked key: %d %q", status, ch)
	}
	status, m = c.refresh(refresh, nil)
	oauthErr(t, status, m, 400, "invalid_grant")
	// Deleting the key deletes its grants and tokens.
	if _, err := b.db.Exec(`DELETE FROM api_keys WHERE id = $1`, keyID); err != nil {
		t.Fatal(err)
	}
	if status, ch, _ := call(t, probe, access, ""); status != 401 || !strings.Contains(ch, "not valid") {
		t.Fatalf("token of a deleted key: %d %q", status, ch)
	}
}

// The challenges the tool server answers with, exactly; static keys pass
// with both scopes.
func TestMCPBearerChallenges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	merchantID, keyID, key := b.merchantKey()
	probe := b.probe(t)
	meta := b.url + "/.well-known/oauth-protected-resource/api/mcp"

	status, challenge, m := call(t, probe, "", "")
	if status != 401 || challenge != `Bearer resource_metadata="`+meta+`"` || mustJSON(m["error"].(map[string]any)["code"]) != `"unauthorized"` {
		t.Fatalf("unauthenticated: %d %q %v", status, challenge, m)
	}
	for _, tok := range []string{"garbage", "Basic abc"} {
		if status, challenge, _ := call(t, probe, tok, ""); status != 401 || challenge != `Bearer resource_metadata="`+meta+`"` {
			t.Errorf("%q: %d %q", tok, status, challenge)
		}
	}
	for _, tok := range []string{"sk_test_" + strings.Repeat("a", 43), "tgat_" + strings.Repeat("a", 43), "tgat_short"} {
		status, challenge, _ := call(t, probe, tok, "")
		want := `Bearer error="invalid_token", error_description="`
		if status != 401 || !strings.HasPrefix(challenge, want) || !strings.HasSuffix(challenge, `resource_metadata="`+meta+`"`) {
			t.Errorf("%q: %d %q", tok, status, challenge)
		}
	}
	status, _, who := call(t, probe, key, "billing:write")
	if status != 200 || who["merchant"] != merchantID || who["key"] != keyID || mustJSON(who["scopes"]) != `["billing:read","billing:write"]` {
		t.Fatalf("static key: %d %v", status, who)
	}
	if err := revokeKey(b, keyID); err != nil {
		t.Fatal(err)
	}
	if status, challenge, _ := call(t, probe, key, ""); status != 401 || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Fatalf("revoked static key: %d %q", status, challenge)
	}
	s := b.d.Server
	if s.ChallengeInsufficientScope("billing:write") != `Bearer error="insufficient_scope", scope="billing:write", resource_metadata="`+meta+`", error_description="this tool needs the billing:write scope"` {
		t.Errorf("insufficient_scope challenge: %s", s.ChallengeInsufficientScope("billing:write"))
	}
}

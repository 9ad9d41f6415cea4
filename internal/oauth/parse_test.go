package oauth

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestValidateRedirectURI(t *testing.T) {
	t.Parallel()
	ok := []string{
		"https://app.example.com/cb", "https://app.example.com:8443/cb?x=1", "https://127.0.0.1/cb",
		"http://127.0.0.1/cb", "http://127.0.0.1:33418/callback", "http://[::1]:9/cb", "http://localhost:3000/cb", "http://127.1.2.3/cb",
	}
	for _, u := range ok {
		if err := ValidateRedirectURI(u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
	bad := []string{
		"", "/cb", "cb", "http://app.example.com/cb", "http://10.0.0.1/cb", "http://127.0.0.1.example.com/cb",
		"https://app.example.com/cb#x", "https://u:p@app.example.com/cb", "javascript:alert(1)", "data:text/html,x",
		"myapp://cb", "ftp://x/cb", "https:///cb", "https://a.example/c b", `https://a.example/"`, "https://a.example/\x00",
		"https://a.example/" + strings.Repeat("a", MaxRedirectURIBytes),
	}
	for _, u := range bad {
		if err := ValidateRedirectURI(u); codeOf(err) != InvalidRedirectURI {
			t.Errorf("%q accepted (%v)", u, err)
		}
	}
}

func TestMatchRedirectURI(t *testing.T) {
	t.Parallel()
	reg := []string{"http://127.0.0.1/callback", "https://app.example/cb"}
	cases := []struct {
		registered []string
		requested  string
		want       string
		ok         bool
	}{
		{reg, "https://app.example/cb", "https://app.example/cb", true},
		{reg, "http://127.0.0.1:5555/callback", "http://127.0.0.1:5555/callback", true}, // any port on loopback
		{reg, "http://127.0.0.1/callback", "http://127.0.0.1/callback", true},
		{reg, "http://127.0.0.1:5555/other", "", false},
		{reg, "http://127.0.0.1:5555/callback?x=1", "", false},
		{reg, "http://localhost:5555/callback", "", false}, // another host, even if loopback too
		{reg, "https://app.example:444/cb", "", false},     // ports only vary on loopback http
		{reg, "https://app.example/cb/", "", false},
		{reg, "", "", false},
		{reg[1:], "", "https://app.example/cb", true},
		{[]string{"http://[::1]:80/cb"}, "http://[::1]:9999/cb", "http://[::1]:9999/cb", true},
	}
	for _, c := range cases {
		got, ok := MatchRedirectURI(c.registered, c.requested)
		if got != c.want || ok != c.ok {
			t.Errorf("MatchRedirectURI(%v, %q) = %q %v, want %q %v", c.registered, c.requested, got, ok, c.want, c.ok)
		}
	}
}

func TestParseClientMetadata(t *testing.T) {
	t.Parallel()
	m, err := ParseClientMetadata([]byte(`{"redirect_uris":["https://a.example/cb"],"client_name":"  Claude  ","contacts":["x"],"logo_uri":"https://a.example/l.png","scope":"billing:read"}`))
	if err != nil || m.ClientName != "Claude" || len(m.RedirectURIs) != 1 {
		t.Fatalf("%+v %v", m, err)
	}
	bad := map[string]string{
		``:                               InvalidClientMetadata,
		`null`:                           InvalidClientMetadata,
		`"s"`:                            InvalidClientMetadata,
		`{"redirect_uris":[1]}`:          InvalidClientMetadata,
		`{"redirect_uris":["x"]`:         InvalidClientMetadata,
		`{}`:                             InvalidRedirectURI,
		`{"redirect_uris":["http://x"]}`: InvalidRedirectURI,
		`{"redirect_uris":["https://a.example/cb"],"client_name":"a\u0007b"}`:                         InvalidClientMetadata,
		`{"redirect_uris":["https://a.example/cb"],"grant_types":["refresh_token"]}`:                  InvalidClientMetadata,
		`{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`:                       InvalidClientMetadata,
		`{"redirect_uris":["https://a.example/cb"],"response_types":["code","token"]}`:                InvalidClientMetadata,
		`{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("é", 101) + `"}`: InvalidClientMetadata,
	}
	for body, code := range bad {
		if _, err := ParseClientMetadata([]byte(body)); codeOf(err) != code {
			t.Errorf("%s: %v, want %s", body, err, code)
		}
	}
	// 100 two-byte characters are 100 characters, not 200.
	if _, err := ParseClientMetadata([]byte(`{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("é", 100) + `"}`)); err != nil {
		t.Error(err)
	}
}

func TestParseTokenRequest(t *testing.T) {
	t.Parallel()
	r, err := ParseTokenRequest([]byte("grant_type=authorization_code&code=c&code_verifier=v&client_id=https%3A%2F%2Fa.example%2Fc&redirect_uri=x"))
	if err != nil || r.ClientID != "https://a.example/c" || r.Code != "c" || r.CodeVerifier != "v" {
		t.Fatalf("%+v %v", r, err)
	}
	bad := map[string]string{
		"":                              InvalidRequest,
		"code=x":                        InvalidRequest,
		"grant_type=password":           UnsupportedGrantType,
		"grant_type=client_credentials": UnsupportedGrantType,
		"grant_type=refresh_token&grant_type=refresh_token":        InvalidRequest,
		"grant_type=refresh_token&refresh_token=a&refresh_token=b": InvalidRequest,
		"grant_type=%zz": InvalidRequest,
		"grant_type=refresh_token&x=" + strings.Repeat("a", MaxTokenRequestBytes): InvalidRequest,
	}
	for body, code := range bad {
		if _, err := ParseTokenRequest([]byte(body)); codeOf(err) != code {
			t.Errorf("%.60q: %v, want %s", body, err, code)
		}
	}
}

func TestParseAuthorizationRequest(t *testing.T) {
	t.Parallel()
	q := url.Values{"client_id": {"c"}, "state": {"s"}, "scope": {"billing:read"}}
	r, err := ParseAuthorizationRequest(q)
	if err != nil || r.ClientID != "c" || r.State != "s" {
		t.Fatalf("%+v %v", r, err)
	}
	if got := r.Values(); got.Encode() != q.Encode() {
		t.Errorf("Values() = %s, want %s", got.Encode(), q.Encode())
	}
	for _, q := range []url.Values{
		{"code_challenge": {"a", "b"}},
		{"state": {strings.Repeat("s", MaxStateBytes+1)}},
		{"scope": {strings.Repeat("s", MaxScopeBytes+1)}},
		{"resource": {strings.Repeat("s", MaxResourceBytes+1)}},
	} {
		if _, err := ParseAuthorizationRequest(q); codeOf(err) != InvalidRequest {
			t.Errorf("%.60v: %v", q, err)
		}
	}
}

func TestCheckRequest(t *testing.T) {
	t.Parallel()
	s := &Service{Resource: "https://t.example/api/mcp"}
	good := AuthorizationRequest{ResponseType: "code", CodeChallenge: strings.Repeat("A", 43), CodeChallengeMethod: "S256"}
	cases := []struct {
		change func(*AuthorizationRequest)
		code   string
		scopes string
	}{
		{func(*AuthorizationRequest) {}, "", "billing:read billing:write"},
		{func(r *AuthorizationRequest) { r.Scope = "billing:read" }, "", "billing:read"},
		{func(r *AuthorizationRequest) { r.Scope = "billing:write" }, "", "billing:read billing:write"},
		{func(r *AuthorizationRequest) { r.Scope = "openid billing:read offline_access" }, "", "billing:read"},
		{func(r *AuthorizationRequest) { r.Scope = "openid" }, InvalidScope, ""},
		{func(r *AuthorizationRequest) { r.Resource = "https://t.example/api/mcp" }, "", "billing:read billing:write"},
		{func(r *AuthorizationRequest) { r.Resource = "https://t.example/api/mcp/" }, InvalidTarget, ""},
		{func(r *AuthorizationRequest) { r.ResponseType = "token" }, UnsupportedResponseType, ""},
		{func(r *AuthorizationRequest) { r.CodeChallengeMethod = "plain" }, InvalidRequest, ""},
		{func(r *AuthorizationRequest) { r.CodeChallenge = strings.Repeat("A", 42) + "=" }, InvalidRequest, ""},
	}
	for i, c := range cases {
		r := good
		c.change(&r)
		scopes, resource, err := s.checkRequest(r)
		got := ""
		if err != nil {
			got = err.Code
		}
		if got != c.code || ScopeString(scopes) != c.scopes || (err == nil && resource != s.Resource) {
			t.Errorf("case %d: %v %q %q, want %q %q", i, err, ScopeString(scopes), resource, c.code, c.scopes)
		}
	}
}

func TestVerifyPKCE(t *testing.T) {
	t.Parallel()
	// RFC 7636 Appendix B.
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !VerifyPKCE(verifier, challenge) {
		t.Fatal("RFC 7636 example rejected")
	}
	for _, v := range []string{verifier[:42], verifier + "x", strings.Repeat("a", 129), verifier[:42] + "+", ""} {
		if VerifyPKCE(v, challenge) {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestMetadataDocument(t *testing.T) {
	t.Parallel()
	const u = "https://client.example/oauth/client.json"
	good := `{"client_id":"` + u + `","client_name":"C","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`
	if m, err := ParseMetadataDocument(u, []byte(good)); err != nil || m.ClientName != "C" {
		t.Fatalf("%+v %v", m, err)
	}
	for _, body := range []string{
		`{"client_id":"https://client.example/other","redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"client_id":"` + u + `","redirect_uris":["http://evil.example/cb"]}`,
		`{"client_id":"` + u + `"}`,
		`{"client_id":"` + u + `","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"private_key_jwt"}`,
		`<html>`,
	} {
		if _, err := ParseMetadataDocument(u, []byte(body)); codeOf(err) != InvalidClient {
			t.Errorf("%s: %v", body, err)
		}
	}
	for _, id := range []string{u, "https://client.example/c?x=1", "https://client.example:8443/c"} {
		if err := ValidateDocumentURL(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"http://client.example/c", "https://client.example", "https://client.example/", "https://client.example/a/./b",
		"https://client.example/a/../b", "https://u@client.example/c", "https://client.example/c#f", "client.example/c", "https://client.example/c d"} {
		if err := ValidateDocumentURL(id); codeOf(err) != InvalidClient {
			t.Errorf("%q accepted", id)
		}
	}
}

func TestShapes(t *testing.T) {
	t.Parallel()
	for _, p := range []string{AccessTokenPrefix, RefreshTokenPrefix, CodePrefix} {
		s := newSecret(p)
		if !hasShape(s, p) || len(s) != len(p)+43 {
			t.Errorf("%q does not have its own shape", s)
		}
		if hasShape(s[:len(s)-1]+"-", p) || hasShape(s+"a", p) || hasShape(strings.Replace(s, p, "xxxx_", 1), p) {
			t.Errorf("malformed %s accepted", p)
		}
	}
	if !LooksLikeAccessToken(AccessTokenPrefix+"x") || LooksLikeAccessToken("sk_test_x") {
		t.Error("LooksLikeAccessToken")
	}
}

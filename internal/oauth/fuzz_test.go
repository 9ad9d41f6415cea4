package oauth

import (
	"net/url"
	"slices"
	"testing"
)

// The parsers of everything a client sends: none may panic, and what each
// accepts must satisfy the rules the rest of the package relies on.

func FuzzParseClientMetadata(f *testing.F) {
	for _, s := range []string{
		`{"redirect_uris":["https://a.example/cb"],"client_name":"C"}`,
		`{"redirect_uris":["http://127.0.0.1:1/cb","http://[::1]/x"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`,
		`{"redirect_uris":["http://a.example/cb"]}`, `{"redirect_uris":null}`, `[]`, `{"client_name":1}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := ParseClientMetadata(body)
		if err != nil {
			if c := codeOf(err); c != InvalidClientMetadata && c != InvalidRedirectURI {
				t.Fatalf("error %v has code %q", err, c)
			}
			return
		}
		if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > MaxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(m.RedirectURIs))
		}
		for _, u := range m.RedirectURIs {
			if ValidateRedirectURI(u) != nil {
				t.Fatalf("accepted redirect URI %q", u)
			}
			// Every accepted URI matches itself and nothing but itself or a
			// loopback port variant.
			if got, ok := MatchRedirectURI(m.RedirectURIs, u); !ok || got != u {
				t.Fatalf("%q does not match itself", u)
			}
		}
		for _, g := range m.GrantTypes {
			if g != "authorization_code" && g != "refresh_token" {
				t.Fatalf("accepted grant type %q", g)
			}
		}
	})
}

func FuzzParseTokenRequest(f *testing.F) {
	for _, s := range []string{
		"grant_type=authorization_code&code=tgac_x&code_verifier=v&client_id=c&redirect_uri=https%3A%2F%2Fa%2Fcb",
		"grant_type=refresh_token&refresh_token=tgrt_x&client_id=c&scope=billing%3Aread",
		"grant_type=password", "grant_type=a&grant_type=b", "%", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseTokenRequest(body)
		if err != nil {
			if c := codeOf(err); c != InvalidRequest && c != UnsupportedGrantType {
				t.Fatalf("error %v has code %q", err, c)
			}
			return
		}
		if r.GrantType != "authorization_code" && r.GrantType != "refresh_token" {
			t.Fatalf("accepted grant_type %q", r.GrantType)
		}
		if len(body) > MaxTokenRequestBytes {
			t.Fatalf("accepted a %d-byte body", len(body))
		}
		if _, err := ParseRevocationRequest(body); err != nil && codeOf(err) != InvalidRequest {
			t.Fatalf("revocation parse: %v", err)
		}
	})
}

func FuzzParseMetadataDocument(f *testing.F) {
	const u = "https://client.example/c.json"
	for _, s := range []string{
		`{"client_id":"` + u + `","redirect_uris":["http://127.0.0.1/cb"],"client_name":"C"}`,
		`{"client_id":"https://other.example/c.json","redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"client_id":"` + u + `","redirect_uris":["https://a/cb"],"token_endpoint_auth_method":"none"}`,
		`{}`, `x`,
	} {
		f.Add(u, []byte(s))
	}
	f.Fuzz(func(t *testing.T, docURL string, body []byte) {
		m, err := ParseMetadataDocument(docURL, body)
		if err != nil {
			if codeOf(err) != InvalidClient {
				t.Fatalf("error %v has code %q", err, codeOf(err))
			}
			return
		}
		if m.ClientID != docURL {
			t.Fatalf("accepted client_id %q for %q", m.ClientID, docURL)
		}
		if m.TokenEndpointAuthMethod != "" && m.TokenEndpointAuthMethod != "none" {
			t.Fatalf("accepted auth method %q", m.TokenEndpointAuthMethod)
		}
		for _, r := range m.RedirectURIs {
			if ValidateRedirectURI(r) != nil {
				t.Fatalf("accepted redirect URI %q", r)
			}
		}
	})
}

func FuzzAuthorizationRequest(f *testing.F) {
	f.Add("response_type=code&client_id=c&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&scope=billing%3Aread&resource=https%3A%2F%2Ft.example%2Fapi%2Fmcp&state=s")
	f.Add("response_type=token&scope=openid")
	f.Add("state=a&state=b")
	s := &Service{Resource: "https://t.example/api/mcp"}
	f.Fuzz(func(t *testing.T, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		r, err := ParseAuthorizationRequest(q)
		if err != nil {
			if codeOf(err) != InvalidRequest {
				t.Fatalf("error %v", err)
			}
			return
		}
		scopes, resource, e := s.checkRequest(r)
		if e != nil {
			return
		}
		if resource != s.Resource || len(scopes) == 0 || !slices.Contains(scopes, ScopeRead) {
			t.Fatalf("accepted %+v with scopes %v resource %q", r, scopes, resource)
		}
		if r.ResponseType != "code" || r.CodeChallengeMethod != "S256" || !validChallenge(r.CodeChallenge) {
			t.Fatalf("accepted %+v", r)
		}
		// The consent form carries the request; reading it back gives the
		// same request.
		if back, err := ParseAuthorizationRequest(r.Values()); err != nil || back != r {
			t.Fatalf("round trip: %+v -> %+v (%v)", r, back, err)
		}
	})
}

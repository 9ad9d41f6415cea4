package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// BenchmarkOAuthTokenIssuance measures token issuance over loopback HTTP:
// authorization_code exchanges (PKCE check, grant and token pair written in
// one transaction) and refresh rotations (reuse check, rotation). Codes are
// made beforehand through the domain, outside the timer, since consent is a
// person at a browser. Sequential runs one client; parallel, GOMAXPROCS*4.
//
//	go test ./daemon -run '^$' -bench OAuthTokenIssuance -benchtime 3s
func BenchmarkOAuthTokenIssuance(b *testing.B) {
	bb := setup(b)
	ctx := context.Background()
	m, _ := auth.CreateMerchant(ctx, bb.db, "bench")
	k, _, _ := auth.CreateKey(ctx, bb.db, m.ID, tenant.Test)
	who := auth.Principal{Scope: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}, KeyID: k.ID}
	c, err := oauth.RegisterClient(ctx, bb.db, oauth.ClientMetadata{RedirectURIs: []string{"http://127.0.0.1/cb"}})
	if err != nil {
		b.Fatal(err)
	}
	svc := oauth.NewService(bb.db, bb.url, bb.url+"/api/mcp", nil)
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	pending := oauth.Pending{Client: c, RedirectURI: c.RedirectURIs[0], Scopes: oauth.Scopes(), Resource: svc.Resource,
		Request: oauth.AuthorizationRequest{CodeChallenge: challenge, RedirectURI: c.RedirectURIs[0]}}
	newCodes := func(n int) []string {
		codes := make([]string, n)
		for i := range codes {
			if codes[i], err = svc.Approve(ctx, pending, who, oauth.Scopes()); err != nil {
				b.Fatal(err)
			}
		}
		return codes
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(form url.Values) map[string]any {
		resp, err := httpc.Post(bb.url+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
			b.Fatalf("token endpoint: %d %s", resp.StatusCode, body)
		}
		return out
	}
	exchange := func(code string) map[string]any {
		return post(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
			"client_id": {c.ID}, "redirect_uri": {c.RedirectURIs[0]}, "resource": {svc.Resource}})
	}
	refresh := func(token string) string {
		return post(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {c.ID}})["refresh_token"].(string)
	}
	perSecond := func(b *testing.B) { b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s") }

	b.Run("authorization_code", func(b *testing.B) {
		codes := newCodes(b.N)
		b.ResetTimer()
		for _, code := range codes {
			exchange(code)
		}
		perSecond(b)
	})
	b.Run("authorization_code_parallel", func(b *testing.B) {
		codes := make(chan string, b.N)
		for _, code := range newCodes(b.N) {
			codes <- code
		}
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				exchange(<-codes)
			}
		})
		perSecond(b)
	})
	b.Run("refresh_token", func(b *testing.B) {
		token := exchange(newCodes(1)[0])["refresh_token"].(string)
		b.ResetTimer()
		for range b.N {
			token = refresh(token)
		}
		perSecond(b)
	})
	b.Run("refresh_token_parallel", func(b *testing.B) {
		b.SetParallelism(4)
		chains := make(chan string, 64)
		for _, code := range newCodes(cap(chains)) {
			chains <- exchange(code)["refresh_token"].(string)
		}
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			token := <-chains // one grant per goroutine: rotation is serial within a grant
			for pb.Next() {
				token = refresh(token)
			}
		})
		perSecond(b)
	})
}

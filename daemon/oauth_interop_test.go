package daemon_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/tollgatehq/tollgate/daemon"
)

// The official MCP Go SDK's OAuth client, which nobody here wrote, against
// the authorization server: from the tool server's 401 it discovers the
// resource and authorization server metadata, registers (dynamically, or
// by its metadata document URL), sends the browser to the consent page,
// checks state and iss, exchanges the code with PKCE and the resource, and
// ends up with a token the tool server accepts.
func TestOAuthGoSDKClient(t *testing.T) {
	t.Parallel()
	ds := newDocServer(t)
	b := setup(t, func(c *daemon.Config) { c.AllowInsecureWebhooks = true; c.WebhookCAFile = ds.caFile })
	_, _, key := b.merchantKey()
	probe := b.probe(t)
	const redirect = "http://127.0.0.1:47213/oauth/callback"
	cimd := ds.publish("/mcp-client.json", map[string]any{
		"client_name": "Go SDK host", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
	})
	registrations := map[string]*auth.AuthorizationCodeHandlerConfig{
		"dynamic registration": {DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK host", RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}}},
		"metadata document": {ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: cimd}},
	}
	for name, cfg := range registrations {
		t.Run(name, func(t *testing.T) {
			browser := newBrowser()
			cfg.RedirectURL = redirect
			cfg.Client = http.DefaultClient
			cfg.AuthorizationCodeFetcher = func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				c := &oauthClient{t: t, b: b, redirect: redirect, browser: browser}
				resp, err := browser.Get(args.URL)
				if err != nil {
					return nil, err
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				page := string(raw)
				if resp.StatusCode != 200 || !strings.Contains(page, "Go SDK host") {
					t.Fatalf("consent page: %d %s", resp.StatusCode, page)
				}
				resp, body := c.submit(page, map[string]string{"secret_key": key, "access": "write", "decision": "allow"})
				q := c.redirected(resp, body)
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			}
			h, err := auth.NewAuthorizationCodeHandler(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The tool server's answer to a request without a token.
			unauth, err := http.Post(probe+"/api/mcp", "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			if unauth.StatusCode != 401 {
				t.Fatalf("probe without a token: %d", unauth.StatusCode)
			}
			req, _ := http.NewRequest(http.MethodPost, b.url+"/api/mcp", nil)
			if err := h.Authorize(context.Background(), req, unauth); err != nil {
				t.Fatalf("SDK authorization: %v", err)
			}
			ts, _ := h.TokenSource(context.Background())
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			status, _, who := call(t, probe, tok.AccessToken, "billing:write")
			if status != 200 || mustJSON(who["scopes"]) != `["billing:read","billing:write"]` {
				t.Fatalf("SDK token on the tool server: %d %v", status, who)
			}
			if tok.RefreshToken == "" {
				t.Error("no refresh token")
			}
		})
	}
}

package daemon_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/tollgatehq/tollgate/client"
)

// The official Go SDK's client with its OAuth support, end to end against
// the tool server itself: the first request is answered 401, the SDK
// discovers the resource and authorization server, registers, sends the
// browser to the consent page (the test submits the form as a browser
// does), exchanges the code with PKCE, and the session's tool calls then
// succeed with the token.
func TestMCPOAuthGoSDKClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	const redirect = "http://127.0.0.1:47214/oauth/callback"
	browser := newBrowser()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK host", RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		Client:      http.DefaultClient,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			c := &oauthClient{t: t, b: b, redirect: redirect, browser: browser}
			resp, err := browser.Get(args.URL)
			if err != nil {
				return nil, err
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp, body := c.submit(string(raw), map[string]string{"secret_key": key, "access": "write", "decision": "allow"})
			q := c.redirected(resp, body)
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-host", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: b.url + "/api/mcp", OAuthHandler: h, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer s.Close()
	inv, isErr := callTool(t, s, "create_invoice", map[string]any{"amount": 2500000, "description": "Through OAuth"})
	if isErr || inv["object"] != "invoice" {
		t.Fatalf("create_invoice over OAuth: %v", inv)
	}
	// The invoice belongs to the merchant whose key consented.
	list, err := b.client(key).ListInvoices(context.Background(), client.ListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != inv["id"] {
		t.Fatalf("the merchant's invoices: %v %+v", err, list)
	}
}

// A token granted read-only access lists tools and calls reads; a write
// tool answers 403 with the insufficient_scope challenge, so the client can
// ask for more. A token for another resource and no token at all are 401.
func TestMCPScopes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, key := b.merchantKey()
	c := b.register(t, "http://127.0.0.1:47215/cb")
	readToken, _ := c.tokens(key, "read")

	s := b.mcpSession(t, readToken, "")
	if l, isErr := callTool(t, s, "list_invoices", nil); isErr || l["object"] != "list" {
		t.Fatalf("list_invoices with a read token: %v", l)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_invoice",
		Arguments: map[string]any{"amount": 1, "description": "x"}}); err == nil {
		t.Fatal("create_invoice with a read-only token succeeded")
	}
	status, h, body := b.mcpPost(readToken, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_invoice","arguments":{"amount":1,"description":"x"}}}`)
	challenge := h.Get("WWW-Authenticate")
	if status != 403 || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `scope="billing:write"`) ||
		!strings.Contains(challenge, "resource_metadata=") || !strings.Contains(body, `"insufficient_scope"`) {
		t.Fatalf("write tool with a read token: %d %q %s", status, challenge, body)
	}
	// Listing needs no write scope.
	if status, _, body := b.mcpPost(readToken, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}`); status != 200 || !strings.Contains(body, "create_invoice") {
		t.Fatalf("tools/list with a read token: %d %s", status, body)
	}
	status, h, _ = b.mcpPost("", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`)
	if status != 401 || h.Get("WWW-Authenticate") != `Bearer resource_metadata="`+b.url+`/.well-known/oauth-protected-resource/api/mcp"` {
		t.Fatalf("no token: %d %q", status, h.Get("WWW-Authenticate"))
	}
	status, h, _ = b.mcpPost(readToken+"x", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}}`)
	if status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a mangled token: %d %q", status, h.Get("WWW-Authenticate"))
	}
}

// mcpPost sends one JSON-RPC message to the tool server as a Streamable
// HTTP client does.
func (b *bundle) mcpPost(token, msg string) (int, http.Header, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.url+"/api/mcp", strings.NewReader(msg))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

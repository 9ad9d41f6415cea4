package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Helpers of the tool-server tests: the official Go SDK's client over a
// bearer credential.

// bearer is a RoundTripper that adds a bearer credential (and, when set,
// checks each exchange against the API description).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpSession connects the SDK client to the daemon's tool server with a
// bearer credential, speaking version (empty: the SDK's newest).
func (b *bundle) mcpSession(t testing.TB, token, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tollgate-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: b.url + "/api/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	s, err := c.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatalf("connect to the tool server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// callTool calls a tool with args and returns the result's structured
// content as JSON, and whether it is a tool error.
func callTool(t testing.TB, s *mcp.ClientSession, name string, args any) (map[string]any, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one text content, got %d", name, len(res.Content))
	}
	if _, ok := res.Content[0].(*mcp.TextContent); !ok {
		t.Fatalf("%s: content is %T, not text", name, res.Content[0])
	}
	return m, res.IsError
}

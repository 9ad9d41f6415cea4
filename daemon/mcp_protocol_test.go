package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// The protocol revisions the tool server speaks (README, "AI clients";
// issue 11), newest first.
var mcpRevisions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// The official Go SDK's client negotiates the current revision, 2026-07-28,
// through server/discover (no initialize, no session) and calls tools with
// it; at each older revision it negotiates that revision through
// initialize.
func TestMCPRevisionsGoSDK(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, version := range append([]string{""}, mcpRevisions...) {
		s := b.mcpSession(t, key, version)
		want := version
		if want == "" {
			want = "2026-07-28"
		}
		init := s.InitializeResult()
		if init.ProtocolVersion != want || init.ServerInfo == nil || init.ServerInfo.Name != "tollgate" || init.Capabilities.Tools == nil {
			t.Fatalf("asking %q: negotiated %q, server %+v, capabilities %+v", version, init.ProtocolVersion, init.ServerInfo, init.Capabilities)
		}
		if s.ID() != "" {
			t.Errorf("%s: session id %q on a stateless server", want, s.ID())
		}
		res, err := s.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != len(wantTools) {
			t.Fatalf("%s: tools/list: %v", want, err)
		}
		if m, isErr := callTool(t, s, "list_meters", map[string]any{"limit": 1}); isErr || m["object"] != "list" {
			t.Fatalf("%s: list_meters: %v", want, m)
		}
	}
}

// The same over raw HTTP, as SEP-2575 describes 2026-07-28: server/discover
// lists the revisions and the server's identity and capabilities; every
// request stands alone, carrying its revision in the MCP-Protocol-Version
// header and in its params' _meta (with the client's identity and
// capabilities), and the two must agree. What the SDK refuses is a
// JSON-RPC error.
func TestMCPRevision20260728RawHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-http","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

	var disc struct {
		Meta struct {
			ServerInfo struct{ Name string } `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		Instructions      string         `json:"instructions"`
	}
	h := mcpRPC(t, b, key, "2026-07-28", "server/discover", "", `{`+meta+`}`, &disc, nil)
	if !slices.Equal(disc.SupportedVersions, mcpRevisions) || disc.Meta.ServerInfo.Name != "tollgate" || disc.Capabilities["tools"] == nil || disc.Instructions == "" {
		t.Fatalf("server/discover: %+v", disc)
	}
	if h.Get("Mcp-Session-Id") != "" || h.Get("wc-version") != daemon.APIVersion || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("server/discover headers: %v", h)
	}

	// A tool call with no initialize before it.
	var call struct {
		Meta struct {
			ServerInfo struct{ Name string } `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	mcpRPC(t, b, key, "2026-07-28", "tools/call", "create_meter", `{"name":"create_meter","arguments":{"key":"tokens","display_name":"Tokens"},`+meta+`}`, &call, nil)
	if call.IsError || call.StructuredContent["object"] != "meter" || call.StructuredContent["key"] != "tokens" || call.Meta.ServerInfo.Name != "tollgate" {
		t.Fatalf("tools/call at 2026-07-28: %+v", call)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	mcpRPC(t, b, key, "2026-07-28", "tools/list", "", `{`+meta+`}`, &list, nil)
	if len(list.Tools) != len(wantTools) {
		t.Fatalf("tools/list at 2026-07-28: %+v", list)
	}

	// The request's revision: in _meta, and agreeing with the header.
	for _, c := range []struct {
		name, header, params string
		code                 int
		message              string
	}{
		{"no _meta", "2026-07-28", `{"name":"list_meters","arguments":{}}`, -32602, `missing or invalid _meta field "io.modelcontextprotocol/protocolVersion"`},
		{"header disagrees", "2025-11-25", `{"name":"list_meters","arguments":{},` + meta + `}`, -32020, `Mcp-Protocol-Version header "2025-11-25" does not match`},
		{"no header", "", `{"name":"list_meters","arguments":{},` + meta + `}`, -32020, "Mcp-Protocol-Version header is required"},
	} {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		mcpRPC(t, b, key, c.header, "tools/call", "list_meters", c.params, nil, &e)
		if e.Code != c.code || !strings.Contains(e.Message, c.message) {
			t.Errorf("%s: JSON-RPC error %+v", c.name, e)
		}
	}
}

// mcpRPC posts one JSON-RPC request to the tool server as a 2026-07-28
// client does (MCP-Protocol-Version when version is set, Mcp-Method, and
// Mcp-Name for a tool call) and decodes its result into result, or its
// JSON-RPC error into rpcErr (the call fails when the answer is the other).
func mcpRPC(t *testing.T, b *bundle, key, version, method, name, params string, result, rpcErr any) http.Header {
	t.Helper()
	msg := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequest("POST", b.url+"/api/mcp", strings.NewReader(msg))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.JSONRPC != "2.0" {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	switch {
	case result != nil && env.Result != nil && resp.StatusCode == 200:
		err = json.Unmarshal(env.Result, result)
	case rpcErr != nil && env.Error != nil:
		err = json.Unmarshal(env.Error, rpcErr)
	default:
		t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	if err != nil {
		t.Fatalf("%s: %v in %s", method, err, raw)
	}
	return resp.Header
}

// Two Authorization headers on the tool server are refused as the REST API
// refuses them: 401, with the same message, whether or not they agree.
func TestMCPTwoAuthorizationHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	const want = "more than one Authorization header; send exactly one"
	for _, second := range []string{key, "sk_test_other"} {
		for _, path := range []string{"/api/mcp", "/v1/invoices"} {
			method := "POST"
			if path == "/v1/invoices" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, b.url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
			req.Header.Add("Authorization", "Bearer "+key)
			req.Header.Add("Authorization", "Bearer "+second)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, message := errorBody(t, string(body))
			if resp.StatusCode != 401 || code != "unauthorized" || message != want {
				t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, body)
			}
			if path == "/api/mcp" && resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+b.url+`/.well-known/oauth-protected-resource/api/mcp"` {
				t.Errorf("challenge %q", resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
	if status, _, body := b.mcpPost(key, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); status != 200 {
		t.Fatalf("one header: %d %s", status, body)
	}
}

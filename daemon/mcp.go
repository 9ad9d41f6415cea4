package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The tool server at /api/mcp: the official MCP Go SDK's Streamable HTTP
// handler, stateless, answering each request with one plain JSON response,
// behind this file's HTTP work: the credential (AuthenticateMCP), the rate
// limit, the scope each called tool needs (a 403 challenge, so the client
// can ask for more), CORS for browser clients, and the error envelope for
// whatever the SDK refuses at the HTTP level. The tools themselves are in
// mcp_tools.go.

// mcpPrincipalKey carries the request's MCPPrincipal to the tool handlers.
type mcpPrincipalKey struct{}

// toolRoutes are the tool server's rows of the route table, with the API
// description next to them.
func (s *Server) toolRoutes() []route {
	return []route{
		{pattern: "POST " + mcpPath, plain: s.mcpCORS(s.serveMCP)},
		{pattern: "OPTIONS " + mcpPath, plain: s.mcpCORS(mcpPreflight)},
		{pattern: mcpPath, plain: s.mcpCORS(s.mcpMethodNotAllowed)},
		{pattern: "GET /openapi.json", plain: cors(s.openAPI), compress: true},
		{pattern: "GET /docs", plain: s.apiDocs, compress: true},
	}
}

// newMCPHandler builds the SDK's handler over two servers: every tool of
// the registry for test-mode credentials, and all but the test-only ones
// (advance_test_clock) for live ones.
func (s *Server) newMCPHandler() http.Handler {
	test, live := s.newMCPServer(true), s.newMCPServer(false)
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if p, ok := r.Context().Value(mcpPrincipalKey{}).(MCPPrincipal); ok && p.Mode == tenant.Test {
			return test
		}
		return live
	}, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// Every request carries a bearer credential that a DNS-rebinding
		// page cannot have, and the daemon is often reached through a
		// proxy on loopback with the public Host.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        s.cfg.MaxBodyBytes,
	})
}

// newMCPServer is the SDK server with the registry's tools (test-only ones
// only when test is true).
func (s *Server) newMCPServer(test bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tollgate", Title: "tollgate billing", Version: s.cfg.Version}, &mcp.ServerOptions{
		Instructions: "Billing tools for one merchant account in one mode (test or live), fixed by the credential. " +
			"Amounts are USDC base units (6 decimals: 9000000 is 9.00 USDC), sent as integers or strings of digits and returned as strings. " +
			"No tool moves funds, changes the settlement wallet or refunds.",
		// Tools only: no logging capability, and no list_changed, since a
		// stateless server never notifies.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// Answers depend on the credential (live ones lack the test-only
		// tools), so no cache may share them between clients: the
		// protocol's default scope is public.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	for _, d := range describeTools(toolTable()) {
		if d.entry.testOnly && !test {
			continue
		}
		srv.AddTool(d.Tool, s.toolHandler(d.entry))
	}
	return srv
}

// ToolDescription is one tool as clients see it, with its REST counterpart
// and the scope it needs.
type ToolDescription struct {
	*mcp.Tool
	REST  string `json:"rest"`
	Scope string `json:"scope"`
	entry tool
}

// Tools returns the tool server's tools with their schemas, as tools/list
// answers them: `tollgate mcp tools` prints them.
func Tools() []ToolDescription { return describeTools(toolTable()) }

func describeTools(table []tool) []ToolDescription {
	out := make([]ToolDescription, len(table))
	gen := apispec.Inline()
	for i, t := range table {
		result := gen.Response(t.out)
		if t.list {
			result = apispec.ListSchema(result)
		}
		no := false
		ann := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: !t.write, DestructiveHint: &no, OpenWorldHint: &no,
			IdempotentHint: t.idempotent || !t.write}
		out[i] = ToolDescription{
			Tool: &mcp.Tool{
				Name: t.name, Title: t.title, Description: t.doc, Annotations: ann,
				InputSchema: gen.Request(t.in),
				// A tool error's structured content is the error envelope,
				// which clients check against this schema too.
				OutputSchema: apispec.Schema{"type": "object", "anyOf": []any{result, apispec.ErrorSchema()}},
			},
			REST: t.rest, Scope: t.scope(), entry: t,
		}
	}
	return out
}

// scope is the OAuth scope the tool needs.
func (t tool) scope() string {
	if t.write {
		return oauth.ScopeWrite
	}
	return oauth.ScopeRead
}

// toolHandler runs one tool call: the scope and mode checks, then the
// entry's run on the arguments. Failures of the operation are tool errors
// carrying the REST error's code and message.
func (s *Server) toolHandler(t tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := ctx.Value(mcpPrincipalKey{}).(MCPPrincipal)
		if !ok {
			return nil, fmt.Errorf("tool %s called without a credential", t.name)
		}
		out, err := s.runTool(ctx, t, p, req.Params.Arguments)
		if err != nil {
			e := apiError(ctx, s.log, err)
			return &mcp.CallToolResult{
				IsError:           true,
				Content:           []mcp.Content{&mcp.TextContent{Text: string(e.Code) + ": " + e.Message}},
				StructuredContent: wire.Error{Error: wire.ErrorDetail{Code: string(e.Code), Message: e.Message}},
			}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summarize(out)}}, StructuredContent: out}, nil
	}
}

func (s *Server) runTool(ctx context.Context, t tool, p MCPPrincipal, raw json.RawMessage) (any, error) {
	// The HTTP layer checked the scope before the SDK saw the request; this
	// is the same check for any path that did not.
	if err := s.RequireScope(p, t.scope()); err != nil {
		return nil, err.(*BearerError).Err
	}
	if t.write {
		if err := s.checkMode(p.Principal); err != nil {
			return nil, err
		}
	}
	args := fields.FromMap(nil)
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		o, err := fields.Decode(t)
		if err != nil {
			return nil, err
		}
		args = o
	}
	return t.run(s, &call{ctx: ctx, p: p.Principal, args: args})
}

// serveMCP serves POST /api/mcp: the credential, the Content-Type, the
// rate limit for one message, the body screened (screenMCP), the rest of
// the rate limit for a batch's other messages, the scopes of the tools it
// calls, and then the SDK, whose answer to a batch is held to
// --mcp-max-response-bytes.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	p, err := s.AuthenticateMCP(r)
	if err == nil && !isJSON(r.Header.Get("Content-Type")) {
		err = &apperr.Error{Code: apperr.InvalidRequest, Status: http.StatusUnsupportedMediaType, Message: "Content-Type must be 'application/json'"}
	}
	if err == nil {
		err = s.limitMCP(w, r, p, 1)
	}
	if err != nil {
		dropBody(w, r)
		s.WriteBearerError(w, r, err)
		return
	}
	raw, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.WriteBearerError(w, r, err)
		return
	}
	body, refusal := s.screenMCP(r, raw)
	if refusal != nil {
		refusal.write(w)
		return
	}
	if err := s.admitMCP(w, r, p, body); err != nil {
		s.WriteBearerError(w, r, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	ew := &envelopeWriter{ResponseWriter: w}
	ctx := context.WithValue(r.Context(), mcpPrincipalKey{}, p)
	if body.batch {
		cw := newCappedWriter(s.cfg.MCPMaxResponseBytes)
		s.mcp.ServeHTTP(cw, r.WithContext(ctx))
		cw.replay(ew)
	} else {
		s.mcp.ServeHTTP(ew, r.WithContext(ctx))
	}
	ew.finish(func(err error) { writeError(w, r, s.log, err) })
}

// limitMCP counts n messages against the tool server's rate limit, per
// credential: the API key, or the OAuth client's merchant, mode and
// client. Every message of a batch counts, as many separate requests
// would.
func (s *Server) limitMCP(w http.ResponseWriter, r *http.Request, p MCPPrincipal, n int) error {
	if !s.cfg.RateLimits || n <= 0 {
		return nil
	}
	d, err := s.limiter.AllowN(r.Context(), p.RateKey(), ratelimit.ClassMCP, n)
	if err != nil {
		return err
	}
	if !d.Allowed {
		secs := max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return apperr.New(apperr.RateLimited, "rate limit of %d requests per minute exceeded for %s (each message of a batch counts); retry in %d s", d.Limit, ratelimit.ClassMCP, secs)
	}
	return nil
}

// admitMCP counts a batch's other messages against the rate limit and
// refuses, with a 403 insufficient_scope challenge, a call of a tool the
// credential's scopes do not cover.
func (s *Server) admitMCP(w http.ResponseWriter, r *http.Request, p MCPPrincipal, body mcpBody) error {
	if err := s.limitMCP(w, r, p, len(body.msgs)-1); err != nil {
		return err
	}
	for _, name := range calledTools(body.msgs) {
		if t, ok := s.toolsByName[name]; ok {
			if err := s.RequireScope(p, t.scope()); err != nil {
				return err
			}
		}
	}
	return nil
}

// calledTools returns the names of the tools JSON-RPC messages call, read
// as the SDK reads them: its message decoder, and case-sensitive field
// names (segmentio's decoder, the SDK's own), so no spelling the SDK would
// run escapes this check. Anything unparseable is left for the SDK to
// refuse.
func calledTools(raws []json.RawMessage) []string {
	var names []string
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || req.Method != "tools/call" {
			continue
		}
		var params struct {
			Name string `json:"name"`
		}
		dec := segjson.NewDecoder(bytes.NewReader(req.Params))
		dec.DontMatchCaseInsensitiveStructFields()
		if dec.Decode(&params) == nil {
			names = append(names, params.Name)
		}
	}
	return names
}

// mcpMethodNotAllowed answers anything but POST and OPTIONS on /api/mcp:
// a stateless server has no stream to GET and no session to DELETE.
func (s *Server) mcpMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "POST, OPTIONS")
	writeError(w, r, s.log, apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s: the tool server takes JSON-RPC over POST only", r.Method, mcpPath))
}

// envelopeWriter passes the SDK's answers through, except its plain-text
// HTTP errors (wrong Accept or Content-Type, a body too large, a bad
// protocol version header), which it turns into the error envelope.
type envelopeWriter struct {
	http.ResponseWriter
	status int
	text   bytes.Buffer
}

func (e *envelopeWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(e.Header().Get("Content-Type"), "text/plain") {
		e.status = code
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *envelopeWriter) Write(b []byte) (int, error) {
	if e.status != 0 {
		return e.text.Write(b)
	}
	return e.ResponseWriter.Write(b)
}

func (e *envelopeWriter) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok && e.status == 0 {
		f.Flush()
	}
}

// finish writes a held error through write.
func (e *envelopeWriter) finish(write func(error)) {
	if e.status == 0 {
		return
	}
	e.Header().Del("X-Content-Type-Options")
	code := apperr.InvalidRequest
	switch {
	case e.status == http.StatusMethodNotAllowed:
		code = apperr.MethodNotAllowed
	case e.status == http.StatusNotFound:
		code = apperr.ResourceNotFound
	case e.status >= 500:
		code = apperr.Internal
	}
	write(&apperr.Error{Code: code, Status: e.status, Message: strings.TrimSpace(e.text.String())})
}

// summarize is a tool result's short text: the object, its id and its
// scalar fields, or a list's size and ids.
func summarize(v any) string {
	raw, _ := json.Marshal(v)
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	if m["object"] == "list" {
		data, _ := m["data"].([]any)
		var ids []string
		for _, d := range data {
			if o, ok := d.(map[string]any); ok {
				if id, ok := o["id"].(string); ok {
					ids = append(ids, id)
				}
			}
		}
		text := fmt.Sprintf("%d object(s), has_more %v", len(data), m["has_more"])
		if c, ok := m["next_cursor"].(string); ok {
			text += ", next_cursor " + c
		}
		if len(ids) > 0 {
			text += ": " + strings.Join(ids, ", ")
		}
		return text
	}
	head := fmt.Sprint(m["object"])
	if id, ok := m["id"].(string); ok {
		head += " " + id
	}
	var parts []string
	for k, v := range m {
		switch v.(type) {
		case string, bool, float64:
			if k != "object" && k != "id" && k != "livemode" {
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
	}
	sort.Strings(parts)
	return head + ": " + strings.Join(parts, " ")
}

package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// What the tool server reads of a POST body before the SDK does: whether it
// is JSON, one message or a batch, and which methods it calls. A batch is
// work multiplied by one request, so it is refused where the protocol has
// none and bounded where it has; malformed messages and unknown methods
// are JSON-RPC errors, as a JSON-RPC peer expects, not HTTP ones.

// lastBatchRevision is the newest MCP revision with JSON-RPC batches:
// 2025-06-18 removed them. Revisions are dates, so they compare as strings.
const lastBatchRevision = "2025-03-26"

// firstDiscoverRevision is the revision from which the SDK itself answers
// an unknown method with a JSON-RPC error (and a 404).
const firstDiscoverRevision = "2026-07-28"

// serverMethods are the methods the SDK's server receives; a call of any
// other is -32601.
var serverMethods = map[string]bool{
	"completion/complete": true, "server/discover": true, "initialize": true, "ping": true,
	"prompts/list": true, "prompts/get": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"subscriptions/listen": true, "notifications/cancelled": true, "notifications/initialized": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

// rpcRefusal is a JSON-RPC error the transport answers itself.
type rpcRefusal struct {
	status  int
	id      json.RawMessage // nil: null
	code    int64
	message string
}

// mcpBody is a screened POST body: its messages, and whether they came as
// a batch.
type mcpBody struct {
	batch bool
	msgs  []json.RawMessage
}

// screenMCP reads body as the SDK will, and refuses what the transport
// must: a body that is not JSON (-32700), a batch where the request's
// revision has none or one longer than --mcp-max-batch, a message that is
// not JSON-RPC (-32600), and a call of a method the server does not have
// (-32601, with the call's id). A request without MCP-Protocol-Version
// has no revision with batches: a stateless server negotiated nothing.
func (s *Server) screenMCP(r *http.Request, body []byte) (mcpBody, *rpcRefusal) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	version := r.Header.Get("MCP-Protocol-Version")
	// What the SDK reads as an array is a batch, whatever its first byte.
	var msgs []json.RawMessage
	isBatch := len(trimmed) > 0 && trimmed[0] == '['
	if !isBatch && segjson.Unmarshal(body, &msgs) == nil {
		isBatch = true
	}
	if isBatch {
		// Refused before it is parsed: the check costs nothing whatever
		// the batch holds.
		if version == "" || version > lastBatchRevision {
			return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest,
				message: fmt.Sprintf("JSON-RPC batches are not part of MCP revision %s; send one message per request "+
					"(batches exist up to %s, named in the MCP-Protocol-Version header)", orNone(version), lastBatchRevision)}
		}
		if err := segjson.Unmarshal(body, &msgs); err != nil {
			return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeParseError, message: "parse error: the body is not JSON"}
		}
		switch {
		case len(msgs) == 0:
			return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest, message: "an empty batch"}
		case len(msgs) > s.cfg.MCPMaxBatch:
			return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest,
				message: fmt.Sprintf("a batch of %d messages; at most %d are allowed in one", len(msgs), s.cfg.MCPMaxBatch)}
		}
		for _, m := range msgs {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, id: messageID(m), code: jsonrpc.CodeInvalidRequest,
					message: "invalid JSON-RPC message in the batch: " + err.Error()}
			}
		}
		return mcpBody{batch: true, msgs: msgs}, nil
	}
	if !segjson.Valid(body) {
		return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeParseError, message: "parse error: the body is not JSON"}
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return mcpBody{}, &rpcRefusal{status: http.StatusBadRequest, id: messageID(body), code: jsonrpc.CodeInvalidRequest,
			message: "invalid JSON-RPC message: " + err.Error()}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && !serverMethods[req.Method] && version < firstDiscoverRevision {
		return mcpBody{}, &rpcRefusal{status: http.StatusOK, id: messageID(body), code: jsonrpc.CodeMethodNotFound,
			message: fmt.Sprintf("method %q not found", truncate(req.Method, 64))}
	}
	return mcpBody{msgs: []json.RawMessage{body}}, nil
}

func orNone(version string) string {
	if version == "" {
		return "(none)"
	}
	return version
}

// messageID is a message's id as sent, when it is one JSON-RPC allows (a
// string or a number); nil otherwise.
func messageID(raw []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if segjson.Unmarshal(raw, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	switch m.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return m.ID
	}
	return nil
}

// write answers the refusal as a JSON-RPC response.
func (e *rpcRefusal) write(w http.ResponseWriter) {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	raw, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: e.code, Message: e.message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(e.status)
	_, _ = w.Write(raw)
}

// cappedWriter holds a batch's answer until the SDK is done, up to limit
// bytes: a batch's answers add up, and past the limit the client gets one
// JSON-RPC error instead of them.
type cappedWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
	limit  int
	over   bool
}

func newCappedWriter(limit int) *cappedWriter {
	return &cappedWriter{header: http.Header{}, limit: limit}
}

func (c *cappedWriter) Header() http.Header { return c.header }

func (c *cappedWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *cappedWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.over || c.buf.Len()+len(b) > c.limit {
		c.over = true
		c.buf = bytes.Buffer{}
		return len(b), nil
	}
	return c.buf.Write(b)
}

// replay writes what was held to w, or the refusal when it ran over.
func (c *cappedWriter) replay(w http.ResponseWriter) {
	if c.over {
		(&rpcRefusal{status: http.StatusBadRequest, code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf("the batch's answers exceed %d bytes; send fewer calls per batch", c.limit)}).write(w)
		return
	}
	for k, v := range c.header {
		w.Header()[k] = v
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.buf.Bytes())
}

// isJSON reports whether a Content-Type names JSON (parameters such as
// charset aside).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// checkJSONBody refuses a REST request body that is not declared JSON
// with 415 invalid_request, as the tool server does: text/plain, form and
// multipart bodies were read as JSON. A request that declares no
// Content-Type at all is read as JSON: no browser can send one across
// origins with a credential, and scripts that leave it out (and bodyless
// voids and cancels) have always worked.
func checkJSONBody(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if r.ContentLength == 0 || r.Method == http.MethodGet || r.Method == http.MethodHead || isJSON(ct) || ct == "" {
		return nil
	}
	return &apperr.Error{Code: apperr.InvalidRequest, Status: http.StatusUnsupportedMediaType,
		Message: "Content-Type must be application/json for a request with a body"}
}

package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/page"
)

// FuzzCalledTools reads arbitrary bodies as the transport's screen and
// scope check before the SDK do (at a revision with batches): never a
// panic, and every call the SDK would make of a message or batch the
// screen lets through is found, so none slips past its scope.
func FuzzCalledTools(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_invoice","arguments":{}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grant_credits"}}]`,
		`{"method":"tools/call","params":[]}`, `[1,2]`, `{`, ` [ {"method":"tools/call","params":{"name":"x"}} ] `,
	} {
		f.Add([]byte(s))
	}
	s := &Server{cfg: Config{MCPMaxBatch: 1 << 20}}
	r, _ := http.NewRequest("POST", "/api/mcp", nil)
	r.Header.Set("MCP-Protocol-Version", lastBatchRevision)
	f.Fuzz(func(t *testing.T, body []byte) {
		screened, refusal := s.screenMCP(r, body)
		if refusal != nil {
			return
		}
		names := calledTools(screened.msgs)
		// What the SDK will run: its own decoder over the message, then
		// the params as it reads them.
		var raws []json.RawMessage
		if segjson.Unmarshal(body, &raws) != nil {
			raws = []json.RawMessage{body}
		} else if !screened.batch {
			t.Fatalf("%s: a batch to the SDK, one message to the screen", body)
		}
		for _, raw := range raws {
			msg, err := jsonrpc.DecodeMessage(raw)
			req, ok := msg.(*jsonrpc.Request)
			if err != nil || !ok || req.Method != "tools/call" {
				continue
			}
			var p mcp.CallToolParamsRaw
			dec := segjson.NewDecoder(bytes.NewReader(req.Params))
			dec.DontMatchCaseInsensitiveStructFields()
			if dec.Decode(&p) == nil && !slices.Contains(names, p.Name) {
				t.Fatalf("%s: missed the call of %q (found %v)", body, p.Name, names)
			}
		}
	})
}

// FuzzListArgs decodes arbitrary tool arguments as the list tools do:
// never a panic, every rejection is invalid_json or invalid_request, and
// an accepted limit is within 1 to 100.
func FuzzListArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"limit":5}`, `{"limit":"100"}`, `{"limit":0}`, `{"limit":1.5}`,
		`{"before":"2026-07-01T00:00:00.12345642Z"}`, `{"before":7}`, `{"colour":1}`, `[]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err == nil {
			var p page.Params
			if p, err = page.DecodeArgs(o); err == nil && (p.Limit < 1 || p.Limit > page.MaxLimit) {
				t.Fatalf("%s: limit %d accepted", body, p.Limit)
			}
		}
		if c := apperr.CodeOf(err); err != nil && c != apperr.InvalidJSON && c != apperr.InvalidRequest {
			t.Fatalf("%s: %v", body, err)
		}
	})
}

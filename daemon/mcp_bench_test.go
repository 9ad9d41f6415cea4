package daemon_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// Tool calls over loopback HTTP with a static key, as load's other
// benchmarks (32 clients, rate limits off): each request is one stateless
// tools/call, as a Streamable HTTP client sends it.
//
//	go test ./daemon -run '^$' -bench 'MCPTool' -benchtime 5000x
func BenchmarkMCPToolCreateMeterEvent(b *testing.B) {
	bb, key := mcpBenchSetup(b)
	benchTool(b, bb, key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_meter_event","arguments":{"event_name":"calls","customer_id":"`+bb.benchCustomer+`"}}}`)
}

func BenchmarkMCPToolCheckEntitlement(b *testing.B) {
	bb, key := mcpBenchSetup(b)
	benchTool(b, bb, key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_entitlement","arguments":{"customer_id":"`+bb.benchCustomer+`","feature_key":"api"}}}`)
}

type mcpBench struct {
	*bundle
	benchCustomer string
}

// mcpBenchSetup makes a count meter, a metered feature granted to a
// customer, and returns the daemon and key.
func mcpBenchSetup(b *testing.B) (*mcpBench, string) {
	bb := setup(b, func(c *daemon.Config) { c.RateLimits = false })
	_, key := bb.testClient()
	s := bb.mcpSession(b, key, "")
	meter, _ := callTool(b, s, "create_meter", map[string]any{"key": "calls", "display_name": "Calls", "aggregation": "count"})
	callTool(b, s, "create_feature", map[string]any{"key": "api", "name": "API", "type": "metered", "meter": meter["id"]})
	g, isErr := callTool(b, s, "grant_entitlement", map[string]any{"feature_key": "api", "external_customer_id": "u_bench", "limit_value": 1_000_000_000})
	if isErr {
		b.Fatalf("setup: %v", g)
	}
	return &mcpBench{bundle: bb, benchCustomer: g["customer_id"].(string)}, key
}

func benchTool(b *testing.B, bb *mcpBench, key, msg string) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", "2025-11-25")
	if status, _, body := bb.mcpPost(key, msg); status != 200 || strings.Contains(body, `"isError":true`) {
		b.Fatalf("tool call: %d %s", status, body)
	}
	loadWith(b, "POST", bb.url+"/api/mcp", key, msg, h)
}

package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// `tollgate mcp tools` prints the daemon's registry: every tool with its
// schemas under --json, one tool by name, and a usage error for an unknown
// name.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	code, out, _ := run("mcp", "tools", "--json")
	var tools []struct {
		Name         string         `json:"name"`
		Scope        string         `json:"scope"`
		REST         string         `json:"rest"`
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &tools) != nil || len(tools) != 28 {
		t.Fatalf("mcp tools --json: %d %s", code, out)
	}
	for _, tl := range tools {
		if tl.InputSchema["type"] != "object" || tl.OutputSchema["type"] != "object" || tl.REST == "" || !strings.HasPrefix(tl.Scope, "billing:") {
			t.Errorf("%s: %+v", tl.Name, tl)
		}
	}
	code, out, _ = run("mcp", "tools", "grant_credits")
	if code != 0 || !strings.HasPrefix(out, "grant_credits — ") || !strings.Contains(out, "POST /v1/credit_grants") ||
		!strings.Contains(out, "• amount (amount, required) ") {
		t.Fatalf("mcp tools grant_credits: %d %s", code, out)
	}
	// One tool by name is that tool's object, not an array of one.
	code, out, _ = run("mcp", "tools", "grant_credits", "--json")
	var one map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one["name"] != "grant_credits" || one["inputSchema"] == nil {
		t.Fatalf("mcp tools grant_credits --json: %d %s", code, out)
	}
	if code, _, errOut := run("mcp", "tools", "refund"); code != ExitUsage || !strings.Contains(errOut, `no tool "refund"`) {
		t.Fatalf("unknown tool: %d %s", code, errOut)
	}
}

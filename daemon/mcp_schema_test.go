package daemon_test

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
)

// Every property of every tool's input schema, nested ones included (a
// plan's features, a batch's items), says what it is: a client shows these
// descriptions to the model choosing the arguments.
func TestMCPInputSchemasDescribeEveryProperty(t *testing.T) {
	t.Parallel()
	tools := daemon.Tools()
	if len(tools) != len(wantTools) {
		t.Fatalf("%d tools, want %d", len(tools), len(wantTools))
	}
	n := 0
	for _, tl := range tools {
		// The schema as tools/list sends it.
		raw, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for _, path := range undescribed(schema, tl.Name, &n) {
			t.Errorf("%s has no description", path)
		}
	}
	// The walk saw the nested properties too (a plan's feature objects).
	if n < 60 {
		t.Fatalf("only %d properties seen", n)
	}
}

// undescribed returns the paths of the properties under schema s (at path)
// that have no description, counting the properties it sees in n.
func undescribed(s map[string]any, path string, n *int) []string {
	var out []string
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p, _ := props[name].(map[string]any)
			*n++
			if d, _ := p["description"].(string); d == "" {
				out = append(out, path+"."+name)
			}
			out = append(out, undescribed(p, path+"."+name, n)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, undescribed(items, path+"[]", n)...)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		alts, _ := s[k].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				out = append(out, undescribed(m, path, n)...)
			}
		}
	}
	return out
}

package daemon

import (
	"strings"
	"testing"
)

// The operation table is the one declaration of each operation: patterns,
// operation ids and tool names are unique, every operation can be served,
// every POST is keyed, and no tool may move funds (the tool server's
// instructions promise it): a tool over an operation that may has a run of
// its own.
func TestOperationTable(t *testing.T) {
	t.Parallel()
	patterns, ids, tools := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, o := range apiOperations() {
		method, path, ok := strings.Cut(o.pattern, " ")
		if !ok || (method != "GET" && method != "POST") || !strings.HasPrefix(path, "/v1/") {
			t.Errorf("%q: want GET or POST on a /v1/ path", o.pattern)
		}
		if patterns[o.pattern] || ids[o.doc.ID] || o.doc.ID == "" {
			t.Errorf("%q: pattern or operation id %q repeated or empty", o.pattern, o.doc.ID)
		}
		patterns[o.pattern], ids[o.doc.ID] = true, true
		if o.run == nil && o.rest == nil {
			t.Errorf("%q: neither run nor rest", o.pattern)
		}
		// The table keys a POST through run; a REST handler of its own
		// must keep its keys itself.
		if o.writes() && o.rest != nil && !o.ownKeys {
			t.Errorf("%q: a POST served by its own handler, without keys of its own", o.pattern)
		}
		if o.class == "" {
			t.Errorf("%q: no rate-limit class", o.pattern)
		}
		for _, tl := range o.toolSpecs() {
			if (o.run == nil && tl.run == nil) || tools[tl.name] || (o.movesFunds && tl.run == nil) {
				t.Errorf("%q: tool %q without run, repeated, or moving funds", o.pattern, tl.name)
			}
			tools[tl.name] = true
		}
	}
	if len(toolTable()) != len(tools) {
		t.Errorf("tool table has %d tools, the operations %d", len(toolTable()), len(tools))
	}
}

package metering

import (
	"encoding/json"
	"testing"

	"github.com/tollgatehq/tollgate/internal/fields"
)

// propsSeeds are properties near the edges of the common shape.
var propsSeeds = []string{
	`{}`,
	`{"a":1,"b":[true,false,null,"x",{"c":-0.5}],"d":{"e":{}}}`,
	`{"model":"gpt-4","tokens":1234,"cached":false,"tags":[]}`,
	`{"a":"ключ","b":"tab\tescaped\n","c":"q\"uote","d":"back\\slash"}`,
	`{"a/b":1,"a\/b":2}`,
	`{"a":1,"a":2}`,
	`{"a":{"x":1},"b":{"x":1}}`,
	`{"a":"\u0041"}`,
	`{"a":1e3}`,
	`{"a":01}`,
	`{"a":-}`,
	`{"a":1.}`,
	`{"a":tru}`,
	`{"a":"\xff"}`,
	"{\"a\":\"\x01\"}",
	"{\"a\":\"\xff\"}",
	"{\"\xc3\":1}",
	`{"a":[1,]}`,
	`{"a":1,}`,
	`{"a" 1}`,
	`[1]`,
	`{"a":"b"`,
	`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
}

// What the one-pass check accepts is valid JSON the field rules accept.
func TestPlainPropertiesAreValid(t *testing.T) {
	for _, s := range propsSeeds {
		plainValid(t, []byte(s))
	}
	for _, s := range propsSeeds[:4] {
		if !plainOK([]byte(s)) {
			t.Errorf("gave up on %s", s)
		}
	}
	for _, s := range []string{`{"a/b":1,"a\/b":2}`, `{"a":1,"a":2}`, `{"a":"\u0041"}`, `{"a":1e3}`} {
		if plainOK([]byte(s)) {
			t.Errorf("accepted %s", s)
		}
	}
}

func FuzzPlainProperties(f *testing.F) {
	for _, s := range propsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(plainValid)
}

func plainOK(b []byte) bool {
	p := batchParser{b: b, src: string(b)}
	raw, ok := p.object()
	return ok && len(raw) == len(b)
}

func plainValid(t *testing.T, b []byte) {
	t.Helper()
	p := batchParser{b: b, src: string(b)}
	raw, ok := p.object()
	if !ok {
		return
	}
	if !json.Valid(raw) {
		t.Errorf("accepted invalid JSON %q", raw)
	} else if problem := fields.JSONProblem(raw); problem != "" {
		t.Errorf("accepted %q, which %s", raw, problem)
	}
}

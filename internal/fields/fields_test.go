package fields

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

func TestDecode(t *testing.T) {
	cases := map[string]apperr.Code{
		``:          apperr.InvalidJSON,
		`   `:       apperr.InvalidJSON,
		`{`:         apperr.InvalidJSON,
		`{"a":1}x`:  apperr.InvalidJSON,
		`[]`:        apperr.InvalidRequest,
		`"s"`:       apperr.InvalidRequest,
		`null`:      apperr.InvalidRequest,
		`{"a":1}`:   "",
		` {"a":1} `: "",
	}
	for body, want := range cases {
		_, err := Decode([]byte(body))
		if apperr.CodeOf(err) != want {
			t.Fatalf("%q: got %v, want %q", body, err, want)
		}
	}
}

func TestFields(t *testing.T) {
	o, err := Decode([]byte(`{"s":"héllo","n":null,"a":"12","i":7,"b":true,"t":"2026-07-01T12:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := o.String("s", 1, 5); s == nil || *s != "héllo" {
		t.Fatalf("string: %v", s)
	}
	if o.String("n", 0, 0) != nil || o.String("missing", 0, 0) != nil {
		t.Fatal("null and absent must read as nil")
	}
	if a, ok := o.Amount("a"); !ok || a != 12 {
		t.Fatal("amount")
	}
	if i := o.Int("i", 1, 10); i == nil || *i != 7 {
		t.Fatal("int")
	}
	if b := o.Bool("b"); b == nil || !*b {
		t.Fatal("bool")
	}
	if tm := o.Time("t"); tm == nil || tm.Year() != 2026 {
		t.Fatal("time")
	}
	if err := o.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestFieldErrorsNameTheField(t *testing.T) {
	cases := []struct {
		body  string
		read  func(*Object)
		field string
	}{
		{`{"x":1}`, func(o *Object) {}, "x"},
		{`{"s":1}`, func(o *Object) { o.String("s", 0, 0) }, "s"},
		{`{"s":"abcdef"}`, func(o *Object) { o.String("s", 1, 5) }, "s"},
		{`{}`, func(o *Object) { o.RequiredString("s", 0, 0) }, "s"},
		{`{}`, func(o *Object) { o.RequiredAmount("amount") }, "amount"},
		{`{"amount":1.5}`, func(o *Object) { o.Amount("amount") }, "amount"},
		{`{"amount":"-1"}`, func(o *Object) { o.Amount("amount") }, "amount"},
		{`{"i":11}`, func(o *Object) { o.Int("i", 1, 10) }, "i"},
		{`{"i":"1"}`, func(o *Object) { o.Int("i", 1, 10) }, "i"},
		{`{"b":"yes"}`, func(o *Object) { o.Bool("b") }, "b"},
		{`{"t":"2026-07-01"}`, func(o *Object) { o.Time("t") }, "t"},
	}
	for _, tc := range cases {
		o, err := Decode([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		tc.read(o)
		err = o.Err()
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, tc.field+":") {
			t.Fatalf("%s: got %v", tc.body, err)
		}
	}
}

// FuzzDecode: arbitrary bodies never panic, and every failure is one of the
// two request codes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"amount":9000000,"description":"x"}`, `{"amount":"1","due_at":"2026-07-01T00:00:00Z"}`, `[`, `{"a":{"b":[1,2]}}`, "{\"s\":\"\xff\"}", `{"s":"a\"b\\c\u00e9\ud83d\ude00","n":1,"t":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := Decode(body)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
				t.Fatalf("code %q", c)
			}
			return
		}
		// stringValue agrees with encoding/json on every value that passes
		// the checks (the only ones it is given).
		for k, v := range o.raw {
			if valueProblem(v) != "" {
				continue
			}
			got, ok := stringValue(v)
			var want string
			if err := json.Unmarshal(v, &want); ok != (err == nil) || got != want {
				t.Fatalf("%s: stringValue(%s) = %q, %v; encoding/json: %q, %v", k, v, got, ok, want, err)
			}
		}
		o.Amount("amount")
		o.String("description", 1, 500)
		o.Time("due_at")
		o.Bool("b")
		o.Int("i", 0, 100)
		if err := o.Err(); err != nil && apperr.CodeOf(err) != apperr.InvalidRequest {
			t.Fatalf("code %v", err)
		}
	})
}

// Text that encoding/json would let through silently, and repeated keys,
// are refused naming the field (or key) they are in.
func TestHostileValuesNameTheField(t *testing.T) {
	cases := []struct {
		body  string
		field string // "" when the body is accepted
	}{
		{`{"s":"a\u0000b"}`, "s"},
		{"{\"s\":\"a\xffb\"}", "s"},
		{"{\"s\":\"\xed\xa0\x80\"}", "s"}, // a surrogate encoded as UTF-8
		{`{"s":"\ud800"}`, "s"},
		{`{"s":"\udc00x"}`, "s"},
		{`{"s":"\ud800\u0041"}`, "s"},
		{`{"s":"x\uD800"}`, "s"},
		{`{"s":"\ud83d\ude00"}`, ""}, // a proper pair
		{`{"s":"\\u0000"}`, ""},      // a backslash, then text
		{`{"s":"\ufffd"}`, ""},       // U+FFFD itself is fine
		{`{"p":{"k":"\u0000"}}`, "p"},
		{`{"p":{"\u0000":1}}`, "p"},
		{"{\"p\":{\"\xff\":1}}", "p"},
		{`{"p":{"a":1,"a":2}}`, "p"},
		{`{"p":{"a":1,"\u0061":2}}`, "p"},
		{`{"p":[{"a":[1,{"b":"\ud800"}]}]}`, "p"},
		{`{"p":{"n":1e999999}}`, "p"},
		{`{"p":{"n":1e131071}}`, ""},
		{`{"p":{"n":1e131072}}`, "p"},
		{`{"p":{"n":-9.99e131071}}`, ""},
		{`{"p":{"n":99e131071}}`, "p"},
		{`{"p":{"n":0.1e131072}}`, ""},
		{`{"p":{"n":0e999999}}`, ""},
		{`{"p":{"n":1e-16383}}`, ""},
		{`{"p":{"n":1.5e-16383}}`, "p"},
		{`{"p":{"n":0e-16384}}`, "p"},
		{`{"p":{"n":1E+5}}`, ""},
		{`{"p":{"n":1e2147483648}}`, "p"},
		{`{"p":{"n":1e-00000000000000000001}}`, ""},
		{`{"p":{"a":1,"b":{"a":2}}}`, ""}, // the same key in different objects
	}
	for _, tc := range cases {
		o, err := Decode([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		o.String("s", 0, 0)
		o.Raw("p")
		err = o.Err()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.body, err)
			}
			continue
		}
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, tc.field+": ") {
			t.Errorf("%s: got %v, want invalid_request naming %s", tc.body, err, tc.field)
		}
	}
}

func TestRepeatedKeysAreRefused(t *testing.T) {
	for body, key := range map[string]string{
		`{"amount":1,"amount":999999}`:       "amount",
		`{"amount":1,"x":2,"am\u006funt":3}`: "amount",
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"a":19}`: "a",
		`{"\u0000":1}`: `"\\u0000"`,
	} {
		_, err := Decode([]byte(body))
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, key+": ") {
			t.Errorf("%s: got %v, want invalid_request naming %s", body, err, key)
		}
	}
}

// A very long unknown key is named, cut short.
func TestLongKeysAreCutInMessages(t *testing.T) {
	o, err := Decode([]byte(`{"` + strings.Repeat("k", 1<<20) + `":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Err(); err == nil || len(err.Error()) > 200 {
		t.Fatalf("error of %d bytes", len(err.Error()))
	}
}

func TestTimesAreNormalised(t *testing.T) {
	cases := map[string]string{ // input → stored (UTC), "" when refused
		"2026-07-01T12:00:00Z":           "2026-07-01T12:00:00Z",
		"2026-07-01T00:00:00-23:59":      "2026-07-01T23:59:00Z",
		"2026-07-01T00:00:00+23:59":      "2026-06-30T00:01:00Z",
		"2026-07-01T00:00:00+24:00":      "",
		"2026-07-01T00:00:00+23:60":      "",
		"2026-07-01T00:00:00-24:00":      "",
		"2026-07-01T00:00:00+00:60":      "",
		"9999-12-31T23:59:59.999999999Z": "9999-12-31T23:59:59.999999Z",
		"9999-12-31T23:59:59-00:01":      "",
		"0001-01-01T00:00:00Z":           "0001-01-01T00:00:00Z",
		"0001-01-01T00:00:00+00:01":      "",
		"0000-12-31T23:00:00-01:00":      "0001-01-01T00:00:00Z",
		"2026-07-01T12:00:00.1234567Z":   "2026-07-01T12:00:00.123456Z",
		"2026-07-01":                     "",
	}
	for in, want := range cases {
		got, err := ParseTime("due_at", in)
		if want == "" {
			if e, ok := apperr.As(err); !ok || !strings.HasPrefix(e.Message, "due_at: ") {
				t.Errorf("%s: got %v, want refused naming due_at", in, err)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339Nano) != want || got.Location() != time.UTC {
			t.Errorf("%s: got %v %v, want %s", in, got, err, want)
		}
	}
}

func TestObjectsRejectItemsOneByOne(t *testing.T) {
	o, err := Decode([]byte(`{"events":[{"a":1},7,{"a":1,"a":2},{"s":"\u0000"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	items, errs, ok := o.Objects("events", 1, 10)
	if !ok || o.Err() != nil || len(items) != 4 {
		t.Fatalf("ok %v err %v items %d", ok, o.Err(), len(items))
	}
	if items[0] == nil || errs[0] != nil || items[1] != nil || errs[1] == nil || items[2] != nil || errs[2] == nil {
		t.Fatalf("items %v errs %v", items, errs)
	}
	items[3].String("s", 0, 0)
	if items[3].Err() == nil {
		t.Fatal("NUL in an item accepted")
	}
	for _, body := range []string{`{"events":[]}`, `{"events":{}}`, `{"events":null}`, `{"events":[1,2,3]}`} {
		o, _ := Decode([]byte(body))
		if _, _, ok := o.Objects("events", 1, 2); ok || o.Err() == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

// FuzzCheck: over arbitrary valid JSON, the checker never panics, and what
// it accepts decodes with no NUL, no replacement of malformed text and no
// key lost to a repeat.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":"\ud83d\ude00","b":[1,2.5e3,{"c":null}]}`, `"\\u0000"`, `{"a":1,"a":2}`, `[1e131071,-0.0e-16383]`, "\"\xff\"", `"\udc00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimSpace(b)
		if !json.Valid(b) {
			return
		}
		if valueProblem(b) != "" {
			return
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				if strings.ContainsRune(v, 0) {
					t.Fatalf("NUL accepted in %q", b)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			case map[string]any:
				for k, x := range v {
					walk(k)
					walk(x)
				}
			}
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("unmarshal: %v", err)
		}
		walk(v)
		if strings.Count(string(mustMarshal(t, v)), "\ufffd") > strings.Count(string(b), "\ufffd")+strings.Count(strings.ToLower(string(b)), `\ufffd`) {
			t.Fatalf("text replaced in %q", b)
		}
		if b[0] == '{' {
			ms, err := splitObject(b)
			if err != nil {
				t.Fatalf("split: %v", err)
			}
			if len(ms) != len(v.(map[string]any)) {
				t.Fatalf("%d members, %d keys", len(ms), len(v.(map[string]any)))
			}
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

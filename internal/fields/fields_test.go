package fields

import (
	"strings"
	"testing"

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
	for _, s := range []string{`{"amount":9000000,"description":"x"}`, `{"amount":"1","due_at":"2026-07-01T00:00:00Z"}`, `[`, `{"a":{"b":[1,2]}}`, "{\"s\":\"\xff\"}"} {
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

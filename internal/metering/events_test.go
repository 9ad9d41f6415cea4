package metering

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

func TestQuantity(t *testing.T) {
	vk := "tokens"
	sum := Meter{Key: "s", Aggregation: Sum}
	count := Meter{Key: "c", Aggregation: Count}
	valued := Meter{Key: "v", Aggregation: Sum, EventValueKey: &vk}
	valuedCount := Meter{Key: "vc", Aggregation: Count, EventValueKey: &vk}
	seven := int64(7)
	for _, tc := range []struct {
		name  string
		in    EventInput
		m     Meter
		want  int64
		code  apperr.Code
		field string
	}{
		{"value wins", EventInput{Value: &seven, Properties: json.RawMessage(`{"tokens":3}`)}, valued, 7, "", ""},
		{"property", EventInput{Properties: json.RawMessage(`{"tokens":3}`)}, valued, 3, "", ""},
		{"property string", EventInput{Properties: json.RawMessage(`{"tokens":"30"}`)}, valued, 30, "", ""},
		{"property null", EventInput{Properties: json.RawMessage(`{"tokens":null}`)}, valued, 0, apperr.MissingValue, ""},
		{"property float", EventInput{Properties: json.RawMessage(`{"tokens":1.5}`)}, valued, 0, apperr.InvalidRequest, "properties.tokens:"},
		{"property negative", EventInput{Properties: json.RawMessage(`{"tokens":-1}`)}, valued, 0, apperr.InvalidRequest, "properties.tokens:"},
		{"property absent", EventInput{Properties: json.RawMessage(`{}`)}, valued, 0, apperr.MissingValue, ""},
		{"count default", EventInput{}, count, 1, "", ""},
		{"count with value", EventInput{Value: &seven}, count, 7, "", ""},
		{"count property absent", EventInput{}, valuedCount, 1, "", ""},
		{"count property", EventInput{Properties: json.RawMessage(`{"tokens":4}`)}, valuedCount, 4, "", ""},
		{"sum missing", EventInput{}, sum, 0, apperr.MissingValue, ""},
		{"sum ignores properties", EventInput{Properties: json.RawMessage(`{"tokens":4}`)}, sum, 0, apperr.MissingValue, ""},
	} {
		got, err := quantity(tc.in, tc.m)
		if apperr.CodeOf(err) != tc.code || got != tc.want {
			t.Errorf("%s: got %d %v", tc.name, got, err)
		}
		if tc.field != "" && (err == nil || !strings.HasPrefix(err.(*apperr.Error).Message, tc.field)) {
			t.Errorf("%s: message %v", tc.name, err)
		}
	}
}

func TestValidate(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 123456789, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		in    EventInput
		field string // "" = valid; "!" = unknown_meter
	}{
		{EventInput{EventName: "a"}, ""},
		{EventInput{EventName: ""}, "event_name:"},
		{EventInput{EventName: "has space"}, "!"},
		{EventInput{EventName: "a", Timestamp: at(-MaxAge)}, ""},
		{EventInput{EventName: "a", Timestamp: at(-MaxAge - time.Second)}, "timestamp:"},
		{EventInput{EventName: "a", Timestamp: at(MaxSkew)}, ""},
		{EventInput{EventName: "a", Timestamp: at(MaxSkew + time.Second)}, "timestamp:"},
		{EventInput{EventName: "a", IdempotencyKey: str(strings.Repeat("ü", 255))}, ""},
		{EventInput{EventName: "a", IdempotencyKey: str(strings.Repeat("ü", 256))}, "idempotency_key:"},
		{EventInput{EventName: "a", IdempotencyKey: str("")}, "idempotency_key:"},
		{EventInput{EventName: "a", ExternalCustomerID: str("")}, "external_customer_id:"},
		{EventInput{EventName: "a", Properties: json.RawMessage(`[1]`)}, "properties:"},
	} {
		err := tc.in.Validate(now)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v", tc.in, err)
		case tc.field == "!" && apperr.CodeOf(err) != apperr.UnknownMeter:
			t.Errorf("%+v: want unknown_meter, got %v", tc.in, err)
		case tc.field != "" && tc.field != "!" && (err == nil || !strings.HasPrefix(err.(*apperr.Error).Message, tc.field)):
			t.Errorf("%+v: want %s, got %v", tc.in, tc.field, err)
		}
		if err == nil && (tc.in.Timestamp == nil || tc.in.Timestamp.Nanosecond()%1000 != 0) {
			t.Errorf("timestamp not filled or not truncated: %v", tc.in.Timestamp)
		}
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`1`, `"1"`, `-1`, `1.0`, `1e3`, `"+1"`, `9223372036854775807`, `9223372036854775808`, `""`, `null`, `" 1"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := ParseValue("value", raw)
		if err != nil {
			if apperr.CodeOf(err) != apperr.InvalidRequest {
				t.Fatalf("code %v", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("negative %d from %q", v, raw)
		}
		s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
		for _, c := range s {
			if c < '0' || c > '9' {
				t.Fatalf("accepted %q", raw)
			}
		}
	})
}

// Properties PostgreSQL's jsonb cannot store, or that encoding/json would
// silently rewrite, are refused naming properties: the request for a single
// event, the item alone in a batch.
func TestDecodeRefusesHostileProperties(t *testing.T) {
	for _, p := range []string{`{"a":"\u0000"}`, `{"\u0000":1}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"\udfff":1}`,
		`{"n":1e999999}`, `{"a":[{"b":1,"b":2}]}`, `{"a":1,"a":2}`} {
		_, err := DecodeRequest([]byte(`{"event_name":"a","properties":` + p + `}`))
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "properties: ") {
			t.Errorf("single %s: %v", p, err)
		}
		req, err := DecodeRequest([]byte(`{"events":[{"event_name":"a"},{"event_name":"a","properties":` + p + `}]}`))
		if err != nil || req.Errs[0] != nil {
			t.Fatalf("batch %s: %v %v", p, err, req.Errs)
		}
		if e, ok := apperr.As(req.Errs[1]); !ok || !strings.HasPrefix(e.Message, "properties: ") {
			t.Errorf("batch item %s: %v", p, req.Errs[1])
		}
	}
}

// isKey agrees with KeyPattern.
func TestIsKeyMatchesKeyPattern(t *testing.T) {
	for _, s := range []string{"", "a", "tokens.v2", "A-Z_0.9", "a b", "a\n", "\na", "é", "a/b", "a$", "^a", "a\x00", ".", "--", "k\u2028"} {
		if got, want := isKey(s), KeyPattern.MatchString(s); got != want {
			t.Errorf("isKey(%q) = %v, KeyPattern says %v", s, got, want)
		}
	}
}

package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tollgatehq/tollgate/internal/wire"
)

// AppendJSON writes what encoding/json's Encoder writes, for events whose
// strings and properties need no escaping and for those that do (HTML
// characters, quotes, control characters, non-ASCII, U+2028, invalid
// UTF-8, whitespace in the properties), with optional fields absent or
// not, and with rejected items.
func TestBatchAppendJSONMatchesEncoder(t *testing.T) {
	str := func(s string) *string { return &s }
	odd := []string{"plain", `quo"te`, `back\slash`, "<b>&amp;</b>", "tab\tnew\nline\x01\x1f\b\f", "é ü 中文 🙂", "line\u2028sep\u2029", "bad\xffutf8", "del\x7f ~ ? @ [ ] ` { | }", ""}
	var data []any
	for i, s := range odd {
		e := wire.MeterEvent{Object: "meter_event", ID: "me_0123456789abcdefABCDEFGH", Meter: s, Value: "42",
			EventTimestamp: "2026-11-28T10:00:00.000000Z", CreatedAt: "2026-11-28T10:00:01.000000Z", Livemode: i%2 == 0, Deduplicated: i%3 == 0}
		if i%2 == 0 {
			e.CustomerID, e.IdempotencyKey = str("cus_"+s), str(s)
		}
		if i%4 == 1 {
			e.CancelledAt = str("2026-11-28T11:00:00.000000Z")
		}
		raws := []string{`{"region":"eu-west-1","n":1,"ok":true,"x":null}`, " { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : \"<&>\" } ",
			`{"s":"\u2028 \u0026"}`, `{"u":"line` + "\u2028" + `"}`, `[]`, ``, `{"bad":"` + "\xff" + `"}`}
		e.Properties = json.RawMessage(raws[i%len(raws)])
		data = append(data, e)
		if i%3 == 2 {
			data = append(data, wire.BatchError{Object: "error", Index: i, Error: wire.ErrorDetail{Code: "invalid_request", Message: "value: " + s}})
		}
	}
	for _, b := range []wire.MeterEventBatch{
		{Object: "list", Accepted: 9, Rejected: 3, Data: data},
		{Object: "list", Data: []any{}},
		{Object: "list"},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(b); err != nil {
			t.Fatal(err)
		}
		got, err := b.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("AppendJSON:\n%s\nencoding/json:\n%s", got, want.Bytes())
		}
	}
}

// Every byte alone, and between plain ones, is written as encoding/json
// writes it, in a string field and, where it is valid JSON there, in a
// string of the properties.
func TestAppendJSONEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, s := range []string{string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "b"} {
			e := wire.MeterEvent{Object: "meter_event", ID: s, Value: "1", EventTimestamp: "t", CreatedAt: "t"}
			if p := []byte(`{"a":"` + s + `"}`); json.Valid(p) {
				e.Properties = p
			}
			b := wire.MeterEventBatch{Object: "list", Data: []any{e}}
			got, err := b.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("byte %#x: %s, want %s", c, got, want.Bytes())
			}
		}
	}
}

// BenchmarkBatchAppendJSON writes the answer to a 500-event batch shaped
// like the shared harness's.
func BenchmarkBatchAppendJSON(b *testing.B) {
	data := make([]any, 500)
	for i := range data {
		cus, key := "cus_0123456789abcdefABCDEFGH", "ing-bench-0123456789-"+string(rune('a'+i%26))
		data[i] = wire.MeterEvent{Object: "meter_event", ID: "me_0123456789abcdefABCDEFGH", Meter: "bench.tokens", CustomerID: &cus, Value: "1234",
			EventTimestamp: "2026-11-28T10:00:00.123Z", IdempotencyKey: &key, CreatedAt: "2026-11-28T10:00:01.456789Z",
			Properties: json.RawMessage(`{"region":"eu-west-1","model":"claude-haiku","request_id":"req_0123456789abcdef","latency_ms":42,"cached":false}`)}
	}
	batch := wire.MeterEventBatch{Object: "list", Accepted: 500, Data: data}
	buf := make([]byte, 0, 256*1024)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := batch.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

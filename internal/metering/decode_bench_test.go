package metering

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeRequest decodes a 500-event batch shaped like the shared
// harness's: four strings, a value and ~100 bytes of properties an event.
func BenchmarkDecodeRequest(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	for i := range MaxBatch {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"event_name":"bench.tokens","external_customer_id":"cust-%04d","value":%d,"timestamp":"2026-11-24T09:00:00.000Z",`+
			`"idempotency_key":"ing-bench-%d","properties":{"region":"eu-west-1","model":"claude-haiku","request_id":"req_%016x","latency_ms":%d,"cached":false}}`,
			i%1000, 1+i, i, i*7919, 20+i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

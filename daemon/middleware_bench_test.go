package daemon_test

import (
	"net/http/httptest"
	"testing"
)

// The middleware's own cost per request: GET /healthz (no database work)
// through the whole chain, instrumentation and its log line included,
// without a network. Run with -benchmem:
//
//	go test ./daemon -run '^$' -bench MiddlewareChain -benchmem
func BenchmarkMiddlewareChain(b *testing.B) {
	bb := setup(b)
	h := bb.d.Server
	r := httptest.NewRequest("GET", "/healthz", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}

package daemon_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
)

// rpcReply is a JSON-RPC answer as the tests read it.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// postMCP posts body to the tool server with key, at version (empty: no
// MCP-Protocol-Version header).
func postMCP(t testing.TB, url, key, version string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// batchOf is a JSON-RPC batch of n calls of method.
func batchOf(n int, method, params string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, method, params)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// vmRSS is this process's resident set in bytes: the daemon under test
// runs in it.
func vmRSS(t testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// rssPeak samples the process's RSS until stop is called, and returns the
// highest sample.
func rssPeak(t testing.TB) (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := vmRSS(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(done); <-finished; return peak.Load() }
}

// settledRSS is the RSS after a collection returned what it could.
func settledRSS(t testing.TB) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return vmRSS(t)
}

// A batch of 16,000 tools/list calls (the probe that took the daemon to
// 2.95 GB) is refused whole where the revision has no batches, which is
// also when MCP-Protocol-Version is absent: at once, as one JSON-RPC error,
// while 8 clients send it 100 times, the process's RSS stays within
// 64 MiB of where it started, and /healthz answers throughout. Not
// parallel: the RSS is the whole test process's.
func TestMCPBatchFloodBoundedMemory(t *testing.T) {
	b := setup(t, func(c *daemon.Config) { c.RateLimits = false })
	_, key := b.testClient()
	flood := batchOf(16000, "tools/list", "{}")
	if len(flood) > 1<<20 {
		t.Fatalf("the flood is %d bytes, past the body limit", len(flood))
	}
	const bound = 64 << 20
	base := settledRSS(t)
	stop := rssPeak(t)
	var wg sync.WaitGroup
	var refused, other atomic.Int64
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 13 - c%2 {
				version := []string{"", "2025-06-18", "2025-11-25", "2026-07-28"}[(c+i)%4]
				status, raw := postMCP(t, b.url, key, version, flood)
				var rep rpcReply
				if status == 400 && json.Unmarshal(raw, &rep) == nil && rep.Error != nil && rep.Error.Code == -32600 &&
					string(rep.ID) == "null" && strings.Contains(rep.Error.Message, "batches are not part of MCP revision") {
					refused.Add(1)
				} else {
					other.Add(1)
					t.Errorf("version %q: %d %.300s", version, status, raw)
				}
			}
		}()
	}
	healthy := 0
	for range 20 {
		if status, _, _ := b.raw("GET", "/healthz", "", ""); status == 200 {
			healthy++
		}
	}
	wg.Wait()
	peak := stop()
	t.Logf("RSS: %d MiB before, %d MiB at the peak of 100 refused 16,000-call batches (bound: +%d MiB)", base>>20, peak>>20, bound>>20)
	if refused.Load() != 100 || healthy != 20 {
		t.Fatalf("%d refused, %d other; /healthz answered %d of 20", refused.Load(), other.Load(), healthy)
	}
	if peak-base > bound {
		t.Fatalf("RSS grew by %d MiB under the flood, more than %d MiB", (peak-base)>>20, bound>>20)
	}
}

// At 2025-03-26, the last revision with batches, a batch runs: up to
// --mcp-max-batch messages, each counted against the rate limit, and its
// answers held to --mcp-max-response-bytes.
func TestMCPBatchLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) {
		c.MCPMaxBatch = 8
		c.Limits[ratelimit.ClassMCP] = 20
	})
	_, key := b.testClient()
	const old = "2025-03-26"

	status, raw := postMCP(t, b.url, key, old, batchOf(9, "tools/list", "{}"))
	var rep rpcReply
	if status != 400 || json.Unmarshal(raw, &rep) != nil || rep.Error == nil || rep.Error.Code != -32600 ||
		!strings.Contains(rep.Error.Message, "a batch of 9 messages; at most 8") {
		t.Fatalf("9 messages: %d %.300s", status, raw)
	}

	// Eight invoices in one batch, then another eight: 16 of the 20 a
	// minute (the refused batch above counted one).
	create := batchOf(8, "tools/call", `{"name":"create_invoice","arguments":{"amount":"1000000","description":"batch"}}`)
	for i := range 2 {
		status, raw = postMCP(t, b.url, key, old, create)
		var reps []rpcReply
		if status != 200 || json.Unmarshal(raw, &reps) != nil || len(reps) != 8 {
			t.Fatalf("batch %d: %d %.300s", i, status, raw)
		}
		for _, r := range reps {
			if r.Error != nil || !strings.Contains(string(r.Result), `"object":"invoice"`) {
				t.Fatalf("batch %d: %s", i, r.Result)
			}
		}
	}
	// Three left: a batch of eight is refused whole, and creates nothing.
	status, raw = postMCP(t, b.url, key, old, create)
	if status != 429 || !strings.Contains(string(raw), `"rate_limited"`) {
		t.Fatalf("past the limit: %d %.300s", status, raw)
	}
	var list struct{ Data []any }
	if status, _, body := b.raw("GET", "/v1/invoices?limit=100", key, ""); status != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list.Data) != 16 {
		t.Fatalf("invoices: %d, %d of them", status, len(list.Data))
	}

	// A batch whose answers run past the response limit is one error.
	small := setup(t, func(c *daemon.Config) { c.MCPMaxResponseBytes = 256 << 10 })
	_, key = small.testClient()
	if status, raw := postMCP(t, small.url, key, old, batchOf(2, "tools/list", "{}")); status != 200 {
		t.Fatalf("two lists: %d %.300s", status, raw)
	}
	status, raw = postMCP(t, small.url, key, old, batchOf(16, "tools/list", "{}"))
	rep = rpcReply{}
	if status != 400 || json.Unmarshal(raw, &rep) != nil || rep.Error == nil || !strings.Contains(rep.Error.Message, "exceed 262144 bytes") {
		t.Fatalf("16 lists: %d %.300s", status, raw)
	}
}

// Malformed JSON-RPC is a JSON-RPC error, not an HTTP one in the REST
// envelope: -32700 for a body that is not JSON, -32600 for JSON that is
// no message, and -32601 for an unknown method, answering the call's id.
func TestMCPJSONRPCErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, c := range []struct {
		version, body string
		status, code  int
		id            string
	}{
		{"2025-11-25", `{"jsonrpc":"2.0","id":7,"method":`, 400, -32700, "null"},
		{"", `not json`, 400, -32700, "null"},
		{"2025-11-25", `{"jsonrpc":"1.0","id":"a","method":"tools/list"}`, 400, -32600, `"a"`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":"x-1","method":"no/such"}`, 200, -32601, `"x-1"`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":42,"method":"tools/lists","params":{}}`, 200, -32601, "42"},
		{"", `{"jsonrpc":"2.0","id":3,"method":"bogus"}`, 200, -32601, "3"},
	} {
		status, raw := postMCP(t, b.url, key, c.version, []byte(c.body))
		var rep rpcReply
		if status != c.status || json.Unmarshal(raw, &rep) != nil || rep.JSONRPC != "2.0" || rep.Error == nil ||
			rep.Error.Code != c.code || string(rep.ID) != c.id {
			t.Errorf("%s at %q: %d %s", c.body, c.version, status, raw)
		}
	}
}

// One space separates Bearer from the credential, on the tool server as
// on the REST API: "Bearer  key" is refused.
func TestBearerWithTwoSpacesRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if status, raw := postMCP(t, b.url, " "+key, "2025-11-25", msg); status != 401 {
		t.Fatalf("tool server: %d %s", status, raw)
	}
	if status, _, body := b.raw("GET", "/v1/invoices", " "+key, ""); status != 401 || !strings.Contains(body, "malformed Authorization header") {
		t.Fatalf("REST: %d %s", status, body)
	}
	if status, raw := postMCP(t, b.url, key, "2025-11-25", msg); status != 200 {
		t.Fatalf("one space: %d %.200s", status, raw)
	}
}

// tools/list differs by credential (live ones lack advance_test_clock), so
// its cache scope is private, not the protocol's default public.
func TestMCPToolListCachePrivate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-http","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	var list struct {
		CacheScope string `json:"cacheScope"`
	}
	mcpRPC(t, b, key, "2026-07-28", "tools/list", "", `{`+meta+`}`, &list, nil)
	if list.CacheScope != "private" {
		t.Fatalf("cacheScope %q", list.CacheScope)
	}
}

package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// cliResult is what one CLI run produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// cliRun runs the CLI with args and returns what it printed. An empty config
// file keeps the developer's own config out of the test.
func cliRun(t *testing.T, streams *IO, args ...string) cliResult {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if streams == nil {
		streams = &IO{}
	}
	streams.In, streams.Out, streams.Err = strings.NewReader(""), &out, &errOut
	code := Run(context.Background(), append([]string{"--config", cfg}, args...), streams)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

const testKey = "sk_test_good"

// fakeAPI speaks the daemon's wire format for invoices and meters, enough
// for the CLI: auth, create, and newest-first paging with opaque cursors.
type fakeAPI struct {
	t   *testing.T
	url string

	mu       sync.Mutex
	invoices []string // raw JSON, newest first
	meters   []string
	queries  []string          // list requests' raw queries
	bodies   []map[string]any  // create requests' bodies
	replies  map[string]string // "METHOD /path" → canned "status body"
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	api := &fakeAPI{t: t, replies: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(api.serve))
	t.Cleanup(srv.Close)
	api.url = srv.URL
	return api
}

// args are the flags pointing the CLI at this API with a valid key.
func (api *fakeAPI) args(args ...string) []string {
	return append(args, "--api-url", api.url, "--api-key", testKey)
}

func (api *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	api.mu.Lock()
	defer api.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("wc-version", "2026-07-01")
	w.Header().Set("request-id", "req_test")
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":"unauthorized","message":"invalid API key"}}`)
		return
	}
	if canned, ok := api.replies[r.Method+" "+r.URL.Path]; ok {
		status, body, _ := strings.Cut(canned, " ")
		code, _ := strconv.Atoi(status)
		w.WriteHeader(code)
		io.WriteString(w, body)
		return
	}
	store := &api.invoices
	if r.URL.Path == "/v1/meters" {
		store = &api.meters
	}
	switch r.Method {
	case http.MethodGet:
		api.queries = append(api.queries, r.URL.RawQuery)
		io.WriteString(w, page(*store, r))
	case http.MethodPost:
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		api.bodies = append(api.bodies, body)
		w.WriteHeader(201)
		if r.URL.Path == "/v1/meters" {
			fmt.Fprintf(w, `{"object":"meter","id":"meter_1","key":%q,"display_name":%q,"aggregation":"sum","event_value_key":null,"unit_label":"","description":null,"created_at":"2026-11-22T03:49:26.123456Z","livemode":false}`,
				body["key"], body["display_name"])
			return
		}
		fmt.Fprintf(w, `{"object":"invoice","id":"inv_1","amount":%q,"status":"open","checkout_url":"%s/checkout/inv_1","description":%q,"memo":null,"invoice_number":null,"recipient":null,"due_at":null,"created_at":"2026-11-22T03:49:26.123456Z","livemode":false}`,
			body["amount"], api.url, body["description"])
	}
}

// page serves one page of items; the cursor is "c<index>".
func page(items []string, r *http.Request) string {
	limit := 25
	if l := r.URL.Query().Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	start := 0
	if b := r.URL.Query().Get("before"); b != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(b, "c"))
	}
	end := min(start+limit, len(items))
	cursor := "null"
	if end < len(items) {
		cursor = fmt.Sprintf(`"c%d"`, end)
	}
	return fmt.Sprintf(`{"object":"list","data":[%s],"has_more":%t,"next_cursor":%s}`,
		strings.Join(items[start:end], ","), end < len(items), cursor)
}

// addInvoices stores n invoices, inv_0 newest, with 1.5 USDC × (i+1).
func (api *fakeAPI) addInvoices(n int) {
	for i := range n {
		api.invoices = append(api.invoices, fmt.Sprintf(
			`{"object":"invoice","id":"inv_%d","amount":"%d","status":"open","checkout_url":"http://x/checkout/inv_%d","description":"Order %d","memo":null,"invoice_number":null,"recipient":null,"due_at":null,"created_at":"2026-11-%02dT10:00:00Z","livemode":false}`,
			i, 1_500_000*(i+1), i, i, 20-i%20))
	}
}

// lastBody is the body of the latest create request.
func (api *fakeAPI) lastBody() map[string]any {
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.bodies) == 0 {
		return nil
	}
	return api.bodies[len(api.bodies)-1]
}

// listQueries are the raw queries of the list requests so far.
func (api *fakeAPI) listQueries() []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]string(nil), api.queries...)
}

// reply makes the API answer method+path with status and body.
func (api *fakeAPI) reply(method, path string, status int, body string) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.replies[method+" "+path] = strconv.Itoa(status) + " " + body
}

func (api *fakeAPI) requests() int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return len(api.queries) + len(api.bodies)
}

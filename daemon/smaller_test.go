package daemon_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
)

// /openapi.json, some hundred kilobytes, is gzipped for clients that take
// it.
func TestOpenAPICompressed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	req, _ := http.NewRequest("GET", b.url+"/openapi.json", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.OpenAPI == "" {
		t.Fatalf("not the document: %.200s", raw)
	}
}

// REST bodies must be declared JSON: 415 invalid_request for text/plain,
// form and multipart; a POST that declares no Content-Type, with a body
// or without, is read as JSON.
func TestRESTBodyMustBeJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "5000000", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"amount":"5000000","description":"typed"}`
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, _ := http.NewRequest("POST", b.url+"/v1/invoices", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 415 || !strings.Contains(string(raw), `"invalid_request"`) {
			t.Errorf("%q: %d %s", ct, resp.StatusCode, raw)
		}
	}
	if status, _, body := b.raw("POST", "/v1/invoices", key, body); status != 201 {
		t.Fatalf("application/json: %d %s", status, body)
	}
	// A body with no Content-Type at all is read as JSON.
	req, _ := http.NewRequest("POST", b.url+"/v1/invoices", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("no Content-Type: %d", resp.StatusCode)
	}
	// A bodyless void, no Content-Type.
	req, _ = http.NewRequest("POST", b.url+"/v1/invoices/"+inv.ID+"/void", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("bodyless void: %d", resp.StatusCode)
	}
}

// The tool server checks Origin against DNS rebinding: none (no browser),
// the base URL's own, loopback ones for a loopback base URL and those of
// --mcp-allowed-origins pass, with CORS naming them; any other is 403 in
// the envelope, preflight included.
func TestMCPOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) {
		c.BaseURL = "https://billing.example.com"
		c.MCPAllowedOrigins = []string{"https://app.example.org"}
	})
	_, key := b.testClient()
	loopback := setup(t)
	_, loopKey := loopback.testClient()
	const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		b       *bundle
		key     string
		origin  string
		allowed bool
	}{
		{b, key, "", true},
		{b, key, "https://billing.example.com", true},
		{b, key, "https://BILLING.example.com:443", true},
		{b, key, "https://app.example.org", true},
		{b, key, "http://localhost:6274", false},
		{b, key, "https://evil.example", false},
		{b, key, "null", false},
		{loopback, loopKey, "http://localhost:6274", true},
		{loopback, loopKey, "http://127.0.0.1:9999", true},
		{loopback, loopKey, "https://evil.example", false},
	} {
		for _, method := range []string{"POST", "OPTIONS"} {
			req, _ := http.NewRequest(method, c.b.url+"/api/mcp", strings.NewReader(msg))
			req.Header.Set("Authorization", "Bearer "+c.key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			acao := resp.Header.Get("Access-Control-Allow-Origin")
			switch {
			case c.allowed && method == "POST" && resp.StatusCode != 200,
				c.allowed && method == "OPTIONS" && resp.StatusCode != 204,
				c.allowed && acao != c.origin:
				t.Errorf("%s from %q: %d, allow-origin %q, %.200s", method, c.origin, resp.StatusCode, acao, raw)
			case !c.allowed && (resp.StatusCode != 403 || acao != "" || !strings.Contains(string(raw), `"forbidden_origin"`)):
				t.Errorf("%s from %q: %d, allow-origin %q, %.200s", method, c.origin, resp.StatusCode, acao, raw)
			}
		}
	}
}

package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// GET /docs is the API reference for people, drawn from /openapi.json:
// every operation and webhook event type it describes has its section, with
// parameters, body fields and their limits, responses and error codes, and
// the page loads nothing from anywhere else.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	status, h, page := b.raw("GET", "/docs", "", "")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", status, h.Get("Content-Type"))
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, " src=") {
		t.Fatal("the page loads a script or another resource")
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") && m[1] != "/openapi.json" {
			t.Errorf("a link leaves the page: %s", m[1])
		}
		if id, ok := strings.CutPrefix(m[1], "#"); ok && !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("the link #%s has no target", id)
		}
	}

	_, _, raw := b.raw("GET", "/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
		Webhooks map[string]any
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, op := range methods {
			ops++
			sec := docsSection(page, op.OperationID)
			if !strings.Contains(sec, ">"+strings.ToUpper(method)+"<") || !strings.Contains(sec, "<code>"+path+"</code>") {
				t.Errorf("%s %s (%s) has no section naming its method and path", method, path, op.OperationID)
			}
		}
	}
	if ops < 20 {
		t.Fatalf("only %d operations in /openapi.json", ops)
	}
	for typ := range doc.Webhooks {
		if !strings.Contains(page, `id="event-`+typ+`"`) {
			t.Errorf("the webhook event %s is not on the page", typ)
		}
	}

	want := map[string][]string{
		"createInvoice": {"Create an invoice", "InvoiceRequest", "<code>description</code>", "1 to 500 characters",
			"<code>amount</code>", "required", "invalid_json", "mode_mismatch", "rate_limited", "201", `href="#schema-Invoice"`},
		"listInvoices":      {"<code>limit</code>", "in query", "1 to 100", "<code>before</code>", "list of"},
		"createMeterEvents": {"Idempotency-Key", "in header", "MeterEventBatchRequest", "1 to 500 items", "unknown_meter", "missing_value"},
		"checkEntitlement":  {"<code>feature_key</code>", "in path", "unknown_feature", "unknown_customer", "404"},
	}
	for id, parts := range want {
		sec := docsSection(page, id)
		for _, p := range parts {
			if !strings.Contains(sec, p) {
				t.Errorf("section %s lacks %q", id, p)
			}
		}
	}
	if !strings.Contains(page, `id="schema-Invoice"`) || !strings.Contains(page, "x-wc-signature") {
		t.Error("the page lacks the objects or the signature header")
	}
}

// docsSection is the page's operation section with the id, up to the next.
func docsSection(page, id string) string {
	i := strings.Index(page, `<div class="op" id="`+id+`"`)
	if i < 0 {
		return ""
	}
	end := strings.Index(page[i+1:], `<div class="op"`)
	if end < 0 {
		return page[i:]
	}
	return page[i : i+1+end]
}

// At a 360 px phone screen in Chromium the page passes the audit the
// checkout pages pass (landmarks, headings, contrast, no sideways
// scrolling), breaks no CSP rule and asks nothing of another origin.
func TestDocsInChromium(t *testing.T) {
	t.Parallel()
	browser := startChromium(t)
	b := setup(t)
	tb := newTab(t, browser, b.url)
	if err := chromedp.Do(tb.ctx, chromedp.EmulateViewport(360, 780, chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(b.url+"/docs"))
	if err != nil || resp.Status != 200 {
		t.Fatalf("open /docs: %v", err)
	}
	if found := tb.eval(auditJS); found != "" {
		t.Fatalf("/docs at 360 px:\n%s", found)
	}
	if v := tb.eval(`window.__csp.join('\n')`); v != "" {
		t.Fatalf("CSP violations:\n%s", v)
	}
	shot, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "docs-360.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.problems) > 0 {
		t.Fatalf("the browser logged:\n%s", strings.Join(tb.problems, "\n"))
	}
	for _, r := range tb.requests {
		if !strings.HasPrefix(r, b.url+"/") {
			t.Fatalf("a request left the daemon: %s", r)
		}
	}
}

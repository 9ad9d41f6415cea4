package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The tool server's tools, in the order tools/list gives them.
var wantTools = []string{
	"create_invoice", "create_meter", "create_feature", "create_meter_event", "grant_credits", "debit_credits",
	"get_credit_balance", "grant_entitlement", "check_entitlement", "list_payments", "list_subscriptions",
	"list_invoices", "list_events", "list_meters",
	"create_plan", "get_invoice", "get_payment", "get_subscription", "advance_test_clock",
	"get_usage", "cancel_meter_event", "create_alert", "list_alerts", "change_subscription", "preview_subscription_change",
	"create_coupon", "list_coupons",
	"create_portal_session",
}

// The official Go SDK's client, with a static key, at every protocol
// revision the server negotiates: it lists the tools with their schemas
// and annotations and calls every one of them.
func TestMCPStaticKeyEveryTool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			s := b.mcpSession(t, key, version)
			if version != "" && s.InitializeResult().ProtocolVersion != version {
				t.Fatalf("negotiated %s, want %s", s.InitializeResult().ProtocolVersion, version)
			}
			res, err := s.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				checkToolDescription(t, tl)
			}
			want := slices.Sorted(slices.Values(wantTools)) // the SDK lists them by name
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, wantTools)
			}
			callEveryTool(t, s)
		})
	}
}

// checkToolDescription asserts what every tool carries: an object input
// schema with required fields, an output schema, and the annotations.
func checkToolDescription(t *testing.T, tl *mcp.Tool) {
	t.Helper()
	in, _ := tl.InputSchema.(map[string]any)
	if in["type"] != "object" || in["additionalProperties"] != false || in["properties"] == nil {
		t.Errorf("%s: input schema %v", tl.Name, in)
	}
	out, _ := tl.OutputSchema.(map[string]any)
	if out["type"] != "object" || out["anyOf"] == nil {
		t.Errorf("%s: output schema %v", tl.Name, out)
	}
	a := tl.Annotations
	write := strings.HasPrefix(tl.Name, "create_") || strings.HasPrefix(tl.Name, "grant_") || tl.Name == "debit_credits" || tl.Name == "advance_test_clock" || tl.Name == "cancel_meter_event" || tl.Name == "change_subscription"
	if a == nil || a.ReadOnlyHint == write || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("%s: annotations %+v", tl.Name, a)
	}
	if tl.Description == "" || tl.Title == "" {
		t.Errorf("%s: no description or title", tl.Name)
	}
}

// callEveryTool calls each tool once, in an order where each finds what it
// needs, and checks the answers.
func callEveryTool(t *testing.T, s *mcp.ClientSession) {
	t.Helper()
	ok := func(name string, args any) map[string]any {
		t.Helper()
		m, isErr := callTool(t, s, name, args)
		if isErr {
			t.Fatalf("%s: tool error %v", name, m)
		}
		return m
	}
	inv := ok("create_invoice", map[string]any{"amount": "9000000", "description": "Consulting"})
	if inv["object"] != "invoice" || inv["amount"] != "9000000" || inv["status"] != "open" || !strings.Contains(inv["checkout_url"].(string), "/checkout/inv_") {
		t.Fatalf("create_invoice: %v", inv)
	}
	id := inv["id"].(string)
	key := "api-calls-" + id[len(id)-8:]
	meter := ok("create_meter", map[string]any{"key": key, "display_name": "API calls", "aggregation": "count"})
	if meter["object"] != "meter" || meter["key"] != key {
		t.Fatalf("create_meter: %v", meter)
	}
	feat := ok("create_feature", map[string]any{"key": key, "name": "API", "type": "metered", "meter": meter["id"]})
	if feat["object"] != "feature" || feat["meter_id"] != meter["id"] {
		t.Fatalf("create_feature: %v", feat)
	}
	ev := ok("create_meter_event", map[string]any{"event_name": key, "external_customer_id": "u_" + key, "idempotency_key": key})
	if ev["object"] != "meter_event" || ev["value"] != "1" || ev["deduplicated"] != false {
		t.Fatalf("create_meter_event: %v", ev)
	}
	if again := ok("create_meter_event", map[string]any{"event_name": key, "external_customer_id": "u_" + key, "idempotency_key": key}); again["deduplicated"] != true || again["id"] != ev["id"] {
		t.Fatalf("create_meter_event replay: %v", again)
	}
	cus := ev["customer_id"].(string)
	g := ok("grant_credits", map[string]any{"amount": 5000000, "customer_id": cus})
	if g["object"] != "credit_grant" || g["balance"] != "5000000" {
		t.Fatalf("grant_credits: %v", g)
	}
	d := ok("debit_credits", map[string]any{"amount": "7000000", "customer_id": cus})
	if d["object"] != "credit_debit" || d["covered"] != "5000000" || d["shortfall"] != "2000000" || d["balance"] != "0" {
		t.Fatalf("debit_credits: %v", d)
	}
	bal := ok("get_credit_balance", map[string]any{"customer_id": cus})
	if bal["object"] != "credit_balance" || bal["granted"] != "5000000" || bal["consumed"] != "5000000" || bal["currency"] != "usdc" {
		t.Fatalf("get_credit_balance: %v", bal)
	}
	eg := ok("grant_entitlement", map[string]any{"feature_key": key, "customer_id": cus, "limit_value": 10})
	if eg["object"] != "entitlement_grant" || eg["feature"] != key {
		t.Fatalf("grant_entitlement: %v", eg)
	}
	check := ok("check_entitlement", map[string]any{"customer_id": cus, "feature_key": key})
	if check["object"] != "entitlement" || check["entitled"] != true || check["limit"] != "10" {
		t.Fatalf("check_entitlement: %v", check)
	}
	for _, name := range []string{"list_payments", "list_subscriptions", "list_invoices", "list_events", "list_meters"} {
		l := ok(name, map[string]any{"limit": 100})
		if l["object"] != "list" || l["has_more"] != false {
			t.Fatalf("%s: %v", name, l)
		}
	}
	if l := ok("list_invoices", map[string]any{}); len(l["data"].([]any)) == 0 {
		t.Fatalf("list_invoices: no invoice: %v", l)
	}
	// credit.granted, credit.debited and entitlement.granted are in the feed.
	evs := ok("list_events", map[string]any{"limit": 3})
	var types []string
	for _, e := range evs["data"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"credit.debited", "credit.granted", "entitlement.granted"}) {
		t.Fatalf("list_events: %v", types)
	}
	if u := ok("get_usage", map[string]any{"customer_id": cus, "meter": key, "window": "day"}); u["object"] != "usage_summary" || u["value"] != "1" || u["aggregation"] != "count" {
		t.Fatalf("get_usage: %v", u)
	}
	al := ok("create_alert", map[string]any{"type": "usage_threshold", "meter": meter["id"], "threshold": 100, "customer_id": cus})
	if al["object"] != "alert" || al["status"] != "active" || al["threshold"] != "100" {
		t.Fatalf("create_alert: %v", al)
	}
	if l := ok("list_alerts", map[string]any{"limit": 10}); len(l["data"].([]any)) == 0 {
		t.Fatalf("list_alerts: %v", l)
	}
	cp := ok("create_coupon", map[string]any{"percent_off": 20, "duration": "repeating", "duration_in_periods": 3})
	if cp["object"] != "coupon" || cp["valid"] != true || cp["times_redeemed"] != float64(0) {
		t.Fatalf("create_coupon: %v", cp)
	}
	if l := ok("list_coupons", map[string]any{"limit": 10}); len(l["data"].([]any)) == 0 {
		t.Fatalf("list_coupons: %v", l)
	}
	if ps := ok("create_portal_session", map[string]any{"customer_id": cus}); ps["object"] != "portal_session" || !strings.Contains(ps["url"].(string), "/portal/") {
		t.Fatalf("create_portal_session: %v", ps)
	}
	if c := ok("cancel_meter_event", map[string]any{"id": ev["id"]}); c["id"] != ev["id"] || c["cancelled_at"] == nil {
		t.Fatalf("cancel_meter_event: %v", c)
	}
	if u := ok("get_usage", map[string]any{"customer_id": cus, "meter": meter["id"]}); u["value"] != "0" {
		t.Fatalf("get_usage after the cancel: %v", u)
	}
	plan := ok("create_plan", map[string]any{"name": "Team", "amount": "2000000", "interval": "month"})
	if plan["object"] != "plan" || !strings.Contains(plan["checkout_url"].(string), "/checkout/price_") {
		t.Fatalf("create_plan: %v", plan)
	}
	if got := ok("get_invoice", map[string]any{"id": id}); got["id"] != id || got["status"] != "open" {
		t.Fatalf("get_invoice: %v", got)
	}
	for _, name := range []string{"get_payment", "get_subscription"} {
		if e, isErr := callTool(t, s, name, map[string]any{"id": "nope"}); !isErr || e["error"].(map[string]any)["code"] != "resource_not_found" {
			t.Fatalf("%s of an unknown id: %v %v", name, isErr, e)
		}
	}
	for _, name := range []string{"change_subscription", "preview_subscription_change"} {
		if e, isErr := callTool(t, s, name, map[string]any{"id": "sub_nope", "plan": plan["id"]}); !isErr || e["error"].(map[string]any)["code"] != "resource_not_found" {
			t.Fatalf("%s of an unknown subscription: %v %v", name, isErr, e)
		}
	}
	// A tool never charges now.
	if e, isErr := callTool(t, s, "change_subscription", map[string]any{"id": "sub_nope", "plan": plan["id"], "at": "now"}); !isErr ||
		!strings.HasPrefix(e["error"].(map[string]any)["message"].(string), "at: ") {
		t.Fatalf("change_subscription at now: %v %v", isErr, e)
	}
	if clock := ok("advance_test_clock", map[string]any{"by": "1h"}); clock["object"] != "test_clock" {
		t.Fatalf("advance_test_clock: %v", clock)
	}
	bad, isErr := callTool(t, s, "create_invoice", map[string]any{"amount": 1.5, "description": "x"})
	if e, _ := bad["error"].(map[string]any); !isErr || e["code"] != "invalid_request" || !strings.Contains(e["message"].(string), "amount") {
		t.Fatalf("create_invoice with a float amount: %v %v", isErr, bad)
	}
}

// A tool error's text carries the code and message; a protocol error (an
// unknown tool) stays a JSON-RPC error.
func TestMCPErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	s := b.mcpSession(t, key, "")
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "check_entitlement", Arguments: map[string]any{"customer_id": "cus_nope", "feature_key": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.HasPrefix(text, "unknown_customer: ") {
		t.Fatalf("unknown customer: %v %q", res.IsError, text)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "refund_payment", Arguments: map[string]any{}}); err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
	// Arguments that are not an object are the REST API's answer to a body
	// that is not one.
	m, isErr := callTool(t, s, "list_meters", []int{1})
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "invalid_request" {
		t.Fatalf("array arguments: %v", m)
	}
	m, isErr = callTool(t, s, "list_meters", map[string]any{"limit": 0})
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "invalid_request" || !strings.Contains(e["message"].(string), "limit") {
		t.Fatalf("limit 0: %v", m)
	}
	m, isErr = callTool(t, s, "list_meters", map[string]any{"colour": "red"})
	if e, _ := m["error"].(map[string]any); !isErr || e["message"] != "colour: unknown field" {
		t.Fatalf("unknown argument: %v", m)
	}
}

// HTTP-level behaviour of /api/mcp: 405 on GET in the envelope, 401 with the
// resource metadata, wc-version everywhere, CORS for browsers, the SDK's own
// refusals in the envelope, and the mode of the server's environment.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Environment = "live" })
	_, key := b.testClient()
	status, h, body := b.raw("GET", "/api/mcp", key, "")
	if status != 405 || !strings.Contains(body, `"method_not_allowed"`) || h.Get("wc-version") != daemon.APIVersion || h.Get("Allow") == "" {
		t.Fatalf("GET /api/mcp: %d %v %s", status, h, body)
	}
	status, h, body = b.raw("POST", "/api/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `resource_metadata="`+b.url+`/.well-known/oauth-protected-resource/api/mcp"`) ||
		!strings.Contains(body, `"unauthorized"`) || h.Get("wc-version") == "" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Fatalf("no key: %d %v %s", status, h, body)
	}
	status, h, body = b.raw("POST", "/api/mcp", "sk_test_"+strings.Repeat("x", 43), `{}`)
	if status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("unknown key: %d %v %s", status, h, body)
	}
	// Without Accept: text/event-stream the SDK refuses; the answer is the
	// envelope all the same.
	status, h, body = b.raw("POST", "/api/mcp", key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != 400 || !strings.Contains(body, `"invalid_request"`) || !strings.Contains(h.Get("Content-Type"), "application/json") {
		t.Fatalf("no Accept: %d %v %s", status, h, body)
	}
	req, _ := http.NewRequest("OPTIONS", b.url+"/api/mcp", nil)
	// The Inspector's page on loopback, the daemon being on loopback.
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// A test key on a live-only server: writes are mode_mismatch, reads work.
	s := b.mcpSession(t, key, "")
	m, isErr := callTool(t, s, "create_invoice", map[string]any{"amount": 1, "description": "x"})
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "mode_mismatch" {
		t.Fatalf("create_invoice on a live server with a test key: %v", m)
	}
	if m, isErr := callTool(t, s, "list_invoices", nil); isErr || m["object"] != "list" {
		t.Fatalf("list_invoices: %v", m)
	}
}

// Each credential sees its own merchant and mode only, and concurrent
// clients are served side by side.
func TestMCPScopedAndConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, testKey := b.key(m, tenant.Test)
	_, liveKey := b.key(m, tenant.Live)
	_, otherKey := b.testClient()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := b.mcpSession(t, testKey, "")
			if res, isErr := callTool(t, s, "create_meter", map[string]any{"key": "m" + string(rune('a'+i)), "display_name": "M"}); isErr {
				t.Errorf("create_meter: %v", res)
			}
		}()
	}
	wg.Wait()
	count := func(key string) int {
		l, _ := callTool(t, b.mcpSession(t, key, ""), "list_meters", nil)
		return len(l["data"].([]any))
	}
	if n := count(testKey); n != 8 {
		t.Fatalf("test key sees %d meters, want 8", n)
	}
	if n := count(liveKey); n != 0 {
		t.Fatalf("live key sees %d meters, want 0", n)
	}
	if n := count(otherKey); n != 0 {
		t.Fatalf("another merchant sees %d meters, want 0", n)
	}
}

// The tool server's rate limit: 120 requests a minute per credential,
// then 429 with retry-after in the envelope.
func TestMCPRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Limits = map[ratelimit.Class]int{ratelimit.ClassMCP: 3} })
	_, key := b.testClient()
	_, other := b.testClient()
	post := func(key string) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", b.url+"/api/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&raw)
		return resp.StatusCode, resp.Header, string(raw)
	}
	for i := range 3 {
		if status, _, body := post(key); status != 200 {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
	}
	status, h, body := post(key)
	if status != 429 || h.Get("Retry-After") == "" || !strings.Contains(body, `"rate_limited"`) {
		t.Fatalf("fourth request: %d %v %s", status, h, body)
	}
	if status, _, body := post(other); status != 200 {
		t.Fatalf("another key: %d %s", status, body)
	}
}

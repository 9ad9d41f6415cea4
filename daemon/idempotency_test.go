package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/tenant"
)

// keyedPost sends a POST with an Idempotency-Key header (none when
// idemKey is empty) and returns status and body.
func (b *bundle) keyedPost(path, key, idemKey, body string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.url+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := b.httpClient().Do(req)
	if err != nil {
		b.t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// count is the number of rows of table for the merchant.
func (b *bundle) count(table, merchantID string) int {
	b.t.Helper()
	var n int
	if err := b.db.GetContext(context.Background(), &n, `SELECT count(*) FROM `+table+` WHERE merchant_id = $1`, merchantID); err != nil {
		b.t.Fatal(err)
	}
	return n
}

func bodyID(t *testing.T, body string) string {
	t.Helper()
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.ID == "" {
		t.Fatalf("no id in %s", body)
	}
	return v.ID
}

// A create or change sent with an Idempotency-Key runs once: a replay with
// the same parameters answers the first status and body byte for byte, the
// same key with other parameters is 400 invalid_request, and keys are kept
// per operation and mode.
func TestIdempotencyKeyReplaysTheFirstAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	_, liveKey := b.key(m, tenant.Live)
	body := `{"amount":"9000000","description":"Consulting"}`
	status, first := b.keyedPost("/v1/invoices", key, "k-1", body)
	if status != 201 {
		t.Fatalf("first: %d %s", status, first)
	}
	// The same parameters spelled otherwise are the same request.
	status, again := b.keyedPost("/v1/invoices", key, "k-1", `{ "description":"Consulting", "amount":"9000000" }`)
	if status != 201 || again != first {
		t.Fatalf("replay: %d %s, want 201 %s", status, again, first)
	}
	status, out := b.keyedPost("/v1/invoices", key, "k-1", `{"amount":"9000001","description":"Consulting"}`)
	if code, msg := errorBody(t, out); status != 400 || code != "invalid_request" || !strings.Contains(msg, "dempotency") {
		t.Fatalf("reused key, other body: %d %s", status, out)
	}
	if n := b.count("invoices", m); n != 1 {
		t.Fatalf("%d invoices, want 1", n)
	}
	// Another operation, or the other mode, has keys of its own.
	if status, out := b.keyedPost("/v1/plans", key, "k-1", `{"name":"Pro","amount":"1000000","interval":"month"}`); status != 201 {
		t.Fatalf("plan with the invoice's key: %d %s", status, out)
	}
	if status, out := b.keyedPost("/v1/invoices", liveKey, "k-1", body); status != 201 || bodyID(t, out) == bodyID(t, first) {
		t.Fatalf("live invoice with the test key's key: %d %s", status, out)
	}
	// Without a key, or with a new one, a create is a new invoice.
	if status, out := b.keyedPost("/v1/invoices", key, "", body); status != 201 || bodyID(t, out) == bodyID(t, first) {
		t.Fatalf("no key: %d %s", status, out)
	}
	// A change: voiding twice with one key answers the first void.
	id := bodyID(t, first)
	status, void := b.keyedPost("/v1/invoices/"+id+"/void", key, "v-1", "")
	if status != 200 || !strings.Contains(void, `"status":"void"`) {
		t.Fatalf("void: %d %s", status, void)
	}
	if status, again := b.keyedPost("/v1/invoices/"+id+"/void", key, "v-1", ""); status != 200 || again != void {
		t.Fatalf("void replay: %d %s", status, again)
	}
	// The key covers the path too: v-1 on another invoice is a reuse.
	status, second := b.keyedPost("/v1/invoices", key, "k-2", body)
	if status != 201 {
		t.Fatal(second)
	}
	if status, out := b.keyedPost("/v1/invoices/"+bodyID(t, second)+"/void", key, "v-1", ""); status != 400 {
		t.Fatalf("void key reused on another invoice: %d %s", status, out)
	}
}

// A create whose answer was lost, here dropped on the floor as a 503 after
// the commit would be, is found by its retry with the same key: one
// invoice, the first one's id.
func TestIdempotencyKeyAfterALostAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	body := `{"amount":"5000000","description":"Lost"}`
	req := httptest.NewRequest("POST", "/v1/invoices", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "lost-1")
	b.d.Server.ServeHTTP(httptest.NewRecorder(), req) // the answer never reaches the client
	var stored []string
	if err := b.db.SelectContext(context.Background(), &stored, `SELECT id FROM invoices WHERE merchant_id = $1`, m); err != nil || len(stored) != 1 {
		t.Fatalf("after the lost answer: %v %v", stored, err)
	}
	status, out := b.keyedPost("/v1/invoices", key, "lost-1", body)
	if status != 201 || bodyID(t, out) != stored[0] {
		t.Fatalf("retry: %d %s, want 201 with %s", status, out, stored[0])
	}
	if n := b.count("invoices", m); n != 1 {
		t.Fatalf("%d invoices after the retry, want 1", n)
	}
}

// Concurrent requests with one key write once and all answer alike.
func TestIdempotencyKeyConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	const n = 32
	var wg sync.WaitGroup
	statuses, bodies := make([]int, n), make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], bodies[i] = b.keyedPost("/v1/invoices", key, "race-1", `{"amount":"1000000","description":"Race"}`)
		}()
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != 201 || bodies[i] != bodies[0] {
			t.Fatalf("request %d: %d %s, want 201 %s", i, statuses[i], bodies[i], bodies[0])
		}
	}
	if c := b.count("invoices", m); c != 1 {
		t.Fatalf("%d invoices, want 1", c)
	}
}

// An Idempotency-Key must be a key: at most 255 characters of text, sent
// once; others are 400 invalid_request on every create or change.
func TestIdempotencyKeyLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	body := `{"amount":"1000000","description":"x"}`
	for _, bad := range []string{strings.Repeat("k", 256), "a\tb", strings.Repeat("é", 256)} {
		for _, path := range []string{"/v1/invoices", "/v1/plans", "/v1/meter-events", "/v1/credit_grants", "/v1/test_helpers/clock/advance"} {
			status, out := b.keyedPost(path, key, bad, body)
			if code, _ := errorBody(t, out); status != 400 || code != "invalid_request" || !strings.Contains(out, "Idempotency-Key") {
				t.Errorf("%s with key %.20q: %d %s", path, bad, status, out)
			}
		}
	}
	if status, out := b.keyedPost("/v1/invoices", key, strings.Repeat("é", 255), body); status != 201 {
		t.Errorf("255 characters: %d %s", status, out)
	}
	req, _ := http.NewRequest("POST", b.url+"/v1/invoices", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Add("Idempotency-Key", "a")
	req.Header.Add("Idempotency-Key", "b")
	resp, err := b.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("two keys: %d", resp.StatusCode)
	}
	if n := b.count("invoices", m); n != 1 {
		t.Errorf("%d invoices, want only the 255-character key's", n)
	}
}

// The API description offers the header on every keyed create or change.
func TestIdempotencyKeyDescribed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, raw := b.raw("GET", "/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
		}
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		op, ok := ops["post"]
		if !ok {
			continue
		}
		found := false
		for _, p := range op.Parameters {
			found = found || (p.Name == "Idempotency-Key" && p.In == "header")
		}
		if !found {
			t.Errorf("POST %s does not describe Idempotency-Key", path)
		}
	}
}

// Every keyed create or change replays its first answer, and refuses its
// key with other parameters; a replayed clock advance moves the clock once.
func TestIdempotencyKeyOnEveryKeyedOperation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	if status, out := b.keyedPost("/v1/features", key, "", `{"key":"beta","name":"Beta"}`); status != 201 {
		t.Fatal(out)
	}
	for _, tc := range []struct{ path, body, other string }{
		{"/v1/meters", `{"key":"calls","display_name":"Calls"}`, `{"key":"calls2","display_name":"Calls"}`},
		{"/v1/features", `{"key":"f1","name":"F1"}`, `{"key":"f2","name":"F2"}`},
		{"/v1/plans", `{"name":"Pro","amount":"1000000","interval":"month"}`, `{"name":"Pro","amount":"2000000","interval":"month"}`},
		{"/v1/entitlement_grants", `{"feature_key":"beta","external_customer_id":"u_1"}`, `{"feature_key":"beta","external_customer_id":"u_2"}`},
		{"/v1/test_helpers/clock/advance", `{"by":"1d"}`, `{"by":"2d"}`},
	} {
		status, first := b.keyedPost(tc.path, key, "once", tc.body)
		if status >= 300 {
			t.Errorf("%s: %d %s", tc.path, status, first)
			continue
		}
		if again, out := b.keyedPost(tc.path, key, "once", tc.body); again != status || out != first {
			t.Errorf("%s replay: %d %s, want %d %s", tc.path, again, out, status, first)
		}
		if again, out := b.keyedPost(tc.path, key, "once", tc.other); again != 400 {
			t.Errorf("%s with the key's other parameters: %d %s", tc.path, again, out)
		}
	}
	_, _, raw := b.raw("GET", "/v1/test_helpers/clock", key, "")
	var clock struct{ Now time.Time }
	if err := json.Unmarshal([]byte(raw), &clock); err != nil {
		t.Fatal(err)
	}
	if ahead := time.Until(clock.Now); ahead < 23*time.Hour || ahead > 36*time.Hour {
		t.Errorf("the clock is %s ahead after one advance by 1d and its replay", ahead)
	}
	if n := b.count("plans", m); n != 1 {
		t.Errorf("%d plans, want 1", n)
	}
	if n := b.count("entitlement_grants", m); n != 1 {
		t.Errorf("%d entitlement grants, want 1", n)
	}
}

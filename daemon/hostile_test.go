package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
)

// Hostile input never gets a 5xx: every string field of every POST body,
// with NUL, invalid UTF-8 or a lone surrogate in it, is 400 invalid_request
// naming the field (a rejected item in a batch).

// hostileFixture is a merchant with a meter, a count meter, a boolean and a
// metered feature, and a customer with a credit account.
type hostileFixture struct {
	*bundle
	key      string
	c        *client.Client
	customer string
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	b := setup(t, func(c *daemon.Config) { c.RateLimits = false })
	c, key := b.testClient()
	ctx := context.Background()
	m, err := c.CreateMeter(ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateMeter(ctx, client.MeterParams{Key: "logins", DisplayName: "Logins", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "sso", Name: "SSO"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "calls", Name: "Calls", Type: "metered", Meter: m.ID}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000", ExternalCustomerID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	return &hostileFixture{bundle: b, key: key, c: c, customer: g.CustomerID}
}

// hostileStrings are JSON string literals no field may accept.
var hostileStrings = map[string]string{
	"NUL":             `"a\u0000b"`,
	"invalid UTF-8":   "\"a\xff\xfeb\"",
	"lone surrogate":  `"a\ud800b"`,
	"lone low half":   `"\udc00"`,
	"UTF-8 surrogate": "\"\xed\xa0\x80\"",
}

// errorBody decodes the error envelope, failing the test if body is not one.
func errorBody(t *testing.T, body string) (code, message string) {
	t.Helper()
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == nil || e.Error.Code == "" {
		t.Fatalf("not the error envelope: %.300q", body)
	}
	return e.Error.Code, e.Error.Message
}

func TestHostileStringsInEveryField(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	cus := f.customer
	type endpoint struct {
		path string
		base map[string]string // field → valid JSON value
	}
	endpoints := []endpoint{
		{"/v1/invoices", map[string]string{"amount": `"9000000"`, "description": `"Pro"`, "memo": `"m"`, "invoice_number": `"n-1"`,
			"recipient": `"a@example.com"`, "due_at": `"2030-01-01T00:00:00Z"`}},
		{"/v1/meters", map[string]string{"key": `"m2"`, "display_name": `"M"`, "aggregation": `"sum"`, "event_value_key": `"n"`,
			"unit_label": `"u"`, "description": `"d"`}},
		{"/v1/features", map[string]string{"key": `"f2"`, "name": `"F"`, "type": `"boolean"`, "unit_label": `"u"`, "description": `"d"`}},
		{"/v1/features", map[string]string{"key": `"f3"`, "name": `"F"`, "type": `"metered"`, "meter": `"meter_x"`}},
		{"/v1/meter-events", map[string]string{"event_name": `"api_calls"`, "value": `"3"`, "customer_id": `"` + cus + `"`,
			"timestamp": `"` + time.Now().UTC().Format(time.RFC3339) + `"`, "idempotency_key": `"k1"`, "properties": `{"a":"b"}`}},
		{"/v1/meter-events", map[string]string{"event_name": `"api_calls"`, "value": `1`, "external_customer_id": `"u1"`}},
		{"/v1/credit_grants", map[string]string{"amount": `"5"`, "customer_id": `"` + cus + `"`, "reason": `"r"`,
			"expires_at": `"2031-01-01T00:00:00Z"`, "idempotency_key": `"g1"`}},
		{"/v1/credit_grants", map[string]string{"amount": `5`, "external_customer_id": `"u1"`}},
		{"/v1/credit_debits", map[string]string{"amount": `"5"`, "customer_id": `"` + cus + `"`, "reason": `"r"`, "idempotency_key": `"d1"`}},
		{"/v1/credit_debits", map[string]string{"amount": `5`, "external_customer_id": `"u1"`}},
		{"/v1/entitlement_grants", map[string]string{"feature_key": `"calls"`, "customer_id": `"` + cus + `"`, "limit_value": `"10"`,
			"active_until": `"2031-01-01T00:00:00Z"`}},
		{"/v1/entitlement_grants", map[string]string{"feature_key": `"sso"`, "external_customer_id": `"u1"`}},
	}
	body := func(base map[string]string, field, value string) string {
		var parts []string
		for k, v := range base {
			if k == field {
				v = value
			}
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	n := 0
	for _, ep := range endpoints {
		for field, valid := range ep.base {
			for what, bad := range hostileStrings {
				value := bad
				switch {
				case field == "properties":
					value = `{"a":` + bad + `}`
				case valid[0] != '"': // a number field: its string form
				}
				n++
				status, _, out := f.raw("POST", ep.path, f.key, body(ep.base, field, value))
				if status != 400 {
					t.Errorf("%s %s %s: status %d %s", ep.path, field, what, status, out)
					continue
				}
				code, msg := errorBody(t, out)
				if code != "invalid_request" || !strings.HasPrefix(msg, field+": ") {
					t.Errorf("%s %s %s: %s %s", ep.path, field, what, code, msg)
				}
				if ep.path != "/v1/meter-events" {
					continue
				}
				// In a batch, the item alone is rejected.
				batch := `{"events":[{"event_name":"logins"},` + body(ep.base, field, value) + `]}`
				status, _, out = f.raw("POST", ep.path, f.key, batch)
				var res struct {
					Accepted, Rejected int
					Data               []json.RawMessage
				}
				if status != 200 || json.Unmarshal([]byte(out), &res) != nil || res.Accepted != 1 || res.Rejected != 1 ||
					!strings.Contains(string(res.Data[1]), `"message":"`+field+`: `) {
					t.Errorf("batch %s %s: %d %s", field, what, status, out)
				}
			}
		}
	}
	if n < 150 {
		t.Fatalf("only %d cases", n)
	}
}

// Keys PostgreSQL's jsonb cannot store inside properties, numbers it cannot
// hold, and repeated keys anywhere, are 400 invalid_request naming the field
// or key.
func TestHostileJSONShapes(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	cases := []struct {
		path, body, field string
	}{
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"properties":{"\u0000":1}}`, "properties"},
		{"/v1/meter-events", "{\"event_name\":\"api_calls\",\"value\":1,\"properties\":{\"\xff\":1}}", "properties"},
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"properties":{"\ud800":1}}`, "properties"},
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"properties":{"n":1e999999}}`, "properties"},
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"properties":{"n":[1,{"x":1.5e-16383}]}}`, "properties"},
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"properties":{"a":1,"a":2}}`, "properties"},
		{"/v1/meter-events", `{"event_name":"api_calls","value":1,"value":2}`, "value"},
		{"/v1/invoices", `{"amount":1,"description":"x","amount":999999}`, "amount"},
		{"/v1/credit_grants", `{"amount":1,"external_customer_id":"u1","amount":999999}`, "amount"},
		{"/v1/credit_debits", `{"amount":1,"external_customer_id":"u1","am\u006funt":999999}`, "amount"},
		{"/v1/entitlement_grants", `{"feature_key":"sso","feature_key":"calls","external_customer_id":"u1"}`, "feature_key"},
		{"/v1/invoices", `{"amount":1,"description":"x","\u0000":1}`, `"\\u0000"`},
		{"/v1/invoices", `{"amount":1,"description":"x","due_at":"2026-07-01T00:00:00-16:00:00"}`, "due_at"},
		{"/v1/invoices", `{"amount":1,"description":"x","due_at":"9999-12-31T23:59:59-00:01"}`, "due_at"},
		{"/v1/invoices", `{"amount":1,"description":"x","due_at":"0001-01-01T00:00:00+01:00"}`, "due_at"},
	}
	for _, tc := range cases {
		status, _, out := f.raw("POST", tc.path, f.key, tc.body)
		if status != 400 {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, out)
			continue
		}
		if code, msg := errorBody(t, out); code != "invalid_request" || !strings.HasPrefix(msg, tc.field+": ") {
			t.Errorf("%s %s: %s %s", tc.path, tc.body, code, msg)
		}
	}
}

// Date-times are stored so that they read back: offsets PostgreSQL cannot
// store are normalised to UTC, and nanoseconds are cut to microseconds
// rather than rounded into year 10000; the merchant's invoices stay
// listable through the client.
func TestDateTimesRoundTrip(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	ctx := context.Background()
	for _, tc := range []struct{ path, body, field, want string }{
		{"/v1/invoices", `{"amount":1,"description":"x","due_at":"9999-12-31T23:59:59.999999999Z"}`, "due_at", "9999-12-31T23:59:59.999999Z"},
		{"/v1/invoices", `{"amount":1,"description":"x","due_at":"2030-01-01T00:00:00-23:59"}`, "due_at", "2030-01-01T23:59:00.000000Z"},
		{"/v1/credit_grants", `{"amount":1,"external_customer_id":"u1","expires_at":"2030-01-01T00:00:00+23:59"}`, "", ""},
		{"/v1/credit_grants", `{"amount":1,"external_customer_id":"u1","expires_at":"9999-12-31T23:59:59.999999999Z"}`, "", ""},
		{"/v1/entitlement_grants", `{"feature_key":"sso","external_customer_id":"u1","active_until":"2030-01-01T00:00:00-23:59"}`, "active_until", "2030-01-01T23:59:00.000000Z"},
		{"/v1/entitlement_grants", `{"feature_key":"sso","external_customer_id":"u2","active_until":"9999-12-31T23:59:59.999999999Z"}`, "active_until", "9999-12-31T23:59:59.999999Z"},
	} {
		status, _, out := f.raw("POST", tc.path, f.key, tc.body)
		if status != 201 {
			t.Errorf("%s: %d %s", tc.body, status, out)
			continue
		}
		if tc.field != "" && !strings.Contains(out, `"`+tc.field+`":"`+tc.want+`"`) {
			t.Errorf("%s: %s", tc.body, out)
		}
	}
	l, err := f.c.ListInvoices(ctx, client.ListParams{})
	if err != nil || len(l.Data) != 2 {
		t.Fatalf("list: %v", err)
	}
	if b, err := f.c.GetCreditBalance(ctx, f.customer); err != nil || b.Balance != "1002" {
		t.Fatalf("balance: %v %+v", err, b)
	}
	e, err := f.c.CheckEntitlement(ctx, f.customer, "sso")
	if err != nil || !e.Entitled {
		t.Fatalf("check: %v %+v", err, e)
	}
}

// NUL or invalid UTF-8 in a path segment can name nothing: 404 with the
// endpoint's own code, or the checkout page's not-found page.
func TestHostilePathSegments(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	cus := f.customer
	for _, tc := range []struct {
		path string
		code string
	}{
		{"/v1/customers/%00/credit_balance", "unknown_customer"},
		{"/v1/customers/cus_%ff%fe/credit_balance", "unknown_customer"},
		{"/v1/customers/%ed%a0%80/credit_balance", "unknown_customer"},
		{"/v1/customers/%00", "unknown_customer"},
		{"/v1/customers/u%ff", "unknown_customer"},
		{"/v1/customers/%00/entitlements/sso", "unknown_customer"},
		{"/v1/customers/%00/entitlements/%00", "unknown_customer"},
		{"/v1/customers/" + cus + "/entitlements/%00", "unknown_feature"},
		{"/v1/customers/" + cus + "/entitlements/ss%ffo", "unknown_feature"},
		{"/v1/customers/" + cus + "/entitlements/" + strings.Repeat("k", 100000), "unknown_feature"},
		{"/v1/customers/" + strings.Repeat("c", 100000) + "/credit_balance", "unknown_customer"},
	} {
		status, h, out := f.raw("GET", tc.path, f.key, "")
		if status != 404 || h.Get("wc-version") == "" {
			t.Errorf("%.80s: %d %.300s", tc.path, status, out)
			continue
		}
		code, msg := errorBody(t, out)
		if code != tc.code || len(msg) > 300 {
			t.Errorf("%.80s: %s %d-byte message %.300q", tc.path, code, len(msg), msg)
		}
	}
	for _, path := range []string{"/checkout/%00", "/checkout/inv_%ff", "/checkout/" + strings.Repeat("i", 100000)} {
		status, h, out := f.raw("GET", path, "", "")
		if status != 404 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(out, "not found") {
			t.Errorf("%.80s: %d %s %.200s", path, status, h.Get("Content-Type"), out)
		}
	}
}

// A value echoed in an error message is cut short: a huge feature_key in a
// body gets a 404 of a few hundred bytes, not the key back.
func TestEchoedValuesAreTruncated(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	huge := strings.Repeat("k", 900<<10)
	for _, tc := range []struct{ body, code string }{
		{`{"feature_key":"` + huge + `","external_customer_id":"u1"}`, "unknown_feature"},
		{`{"feature_key":"sso","customer_id":"` + huge + `"}`, "unknown_customer"},
		{`{"feature_key":"sso","external_customer_id":"u1","` + huge + `":1}`, "invalid_request"},
	} {
		status, _, out := f.raw("POST", "/v1/entitlement_grants", f.key, tc.body)
		if status >= 500 || len(out) > 1000 {
			t.Errorf("%d, %d bytes: %.200s", status, len(out), out)
			continue
		}
		if code, _ := errorBody(t, out); code != tc.code {
			t.Errorf("code %s, want %s", code, tc.code)
		}
	}
	status, _, out := f.raw("POST", "/v1/meter-events", f.key, `{"event_name":"`+huge+`"}`)
	if status != 404 || len(out) > 1000 {
		t.Errorf("meter event: %d, %d bytes", status, len(out))
	}
}

// A non-UTF-8 (or NUL-bearing) Idempotency-Key header is 400 naming
// idempotency_key on every endpoint that takes one.
func TestIdempotencyKeyHeaderMustBeText(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	for _, tc := range []struct{ path, body string }{
		{"/v1/credit_grants", `{"amount":1,"external_customer_id":"u1"}`},
		{"/v1/credit_debits", `{"amount":1,"external_customer_id":"u1"}`},
		{"/v1/meter-events", `{"event_name":"logins","external_customer_id":"u1"}`},
	} {
		req, _ := http.NewRequest("POST", f.url+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+f.key)
		req.Header.Set("Idempotency-Key", "k\xff\xfe")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, out)
			continue
		}
		if code, msg := errorBody(t, string(out)); code != "invalid_request" || !strings.Contains(msg, "dempotency") {
			t.Errorf("%s: %s %s", tc.path, code, msg)
		}
	}
}

// The OAuth endpoints refuse text that is not valid (a 400 in OAuth's own
// format, or the consent flow's error page) rather than store it rewritten
// or fail in PostgreSQL.
func TestHostileOAuthInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ method, path, ctype, body, want string }{
		{"POST", "/oauth/register", "application/json", `{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"a\u0000b"}`, "invalid_client_metadata"},
		{"POST", "/oauth/register", "application/json", "{\"redirect_uris\":[\"http://127.0.0.1/cb\"],\"client_name\":\"a\xffb\"}", "invalid_client_metadata"},
		{"POST", "/oauth/register", "application/json", `{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"\ud800"}`, "invalid_client_metadata"},
		{"POST", "/oauth/token", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=a%00&client_id=b&code_verifier=z", "invalid_request"},
		{"POST", "/oauth/token", "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=a&client_id=b%ff", "invalid_request"},
		{"POST", "/oauth/revoke", "application/x-www-form-urlencoded", "token=a%00", "invalid_request"},
		{"POST", "/oauth/authorize", "application/x-www-form-urlencoded", "client_id=a%00&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb", "Authorization failed"},
		{"POST", "/oauth/authorize", "application/x-www-form-urlencoded", "client_id=tgc_x&state=%ff", "Authorization failed"},
		{"GET", "/oauth/authorize?client_id=a%ff&response_type=code", "", "", "invalid_request"},
	} {
		req, _ := http.NewRequest(tc.method, b.url+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		req.Header.Set("Origin", b.url)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %s %q: %d %.300s", tc.method, tc.path, tc.body, resp.StatusCode, out)
		}
	}
}

// Query parameters that are not valid text are 400 invalid_request naming
// the parameter, on every route.
func TestHostileQueryParameters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	for _, tc := range []struct{ path, param string }{
		{"/v1/invoices?before=%00", "before"},
		{"/v1/events?limit=1&before=2026-01-01T00:00:00Z%ff", "before"},
		{"/v1/subscriptions?customer_id=cus_%ff%fe", "customer_id"},
		{"/v1/meters?x%00=1", ""},
	} {
		status, h, out := b.raw("GET", tc.path, key, "")
		code, msg := errorBody(t, out)
		if status != 400 || code != "invalid_request" || !strings.HasPrefix(msg, tc.param) || h.Get("wc-version") == "" {
			t.Errorf("%s: %d %s", tc.path, status, out)
		}
	}
}

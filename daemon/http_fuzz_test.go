package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/users"
)

// fuzzRoute is a request shape the HTTP fuzz target fills in: method and
// path (where "{}" takes the fuzzed segment and "{cus}" the fixture's
// customer), and whether the fuzzed bytes are a JSON body, a form or a
// query string.
type fuzzRoute struct {
	method, path string
	input        string // "json", "form" or "query"
}

var fuzzRoutes = []fuzzRoute{
	{"POST", "/v1/invoices", "json"},
	{"GET", "/v1/invoices", "query"},
	{"POST", "/v1/meters", "json"},
	{"GET", "/v1/meters", "query"},
	{"POST", "/v1/features", "json"},
	{"POST", "/v1/meter-events", "json"},
	{"POST", "/v1/credit_grants", "json"},
	{"POST", "/v1/credit_debits", "json"},
	{"POST", "/v1/entitlement_grants", "json"},
	{"GET", "/v1/customers/{}/credit_balance", "query"},
	{"GET", "/v1/customers/{}", "query"},
	{"GET", "/v1/customers/{cus}/entitlements/{}", "query"},
	{"GET", "/v1/customers/{}/entitlements/sso", "query"},
	{"GET", "/v1/events", "query"},
	{"GET", "/v1/payments", "query"},
	{"GET", "/v1/subscriptions", "query"},
	{"POST", "/v1/{}", "json"},
	{"GET", "/checkout/{}", "query"},
	{"POST", "/oauth/register", "json"},
	{"POST", "/oauth/token", "form"},
	{"POST", "/oauth/revoke", "form"},
	{"GET", "/oauth/authorize", "query"},
	{"POST", "/api/mcp", "json"},
	{"POST", "/oauth/authorize", "form"},
	{"POST", "/v1/plans", "json"},
	{"GET", "/v1/invoices/{}", "query"},
	{"POST", "/v1/invoices/{}/void", "json"},
	{"GET", "/v1/payments/{}", "query"},
	{"GET", "/v1/subscriptions/{}", "query"},
	{"POST", "/v1/subscriptions/{}/cancel", "json"},
	{"GET", "/v1/subscriptions/{}/upcoming", "query"},
	{"GET", "/v1/test_helpers/clock", "query"},
	{"POST", "/v1/test_helpers/clock/advance", "json"},
	{"POST", "/checkout/{}/pay", "form"},
	{"GET", "/checkout/{}/authorization", "query"},
	{"POST", "/checkout/{}/authorization", "json"},
	{"GET", "/v1/customers/{cus}/usage", "query"},
	{"GET", "/v1/customers/{}/usage", "query"},
	{"POST", "/v1/meter-events/{}/cancel", "json"},
	{"POST", "/v1/alerts", "json"},
	{"GET", "/v1/alerts", "query"},
	{"POST", "/v1/alerts/{}/archive", "json"},
	{"POST", "/v1/coupons", "json"},
	{"GET", "/v1/coupons", "query"},
	{"POST", "/v1/coupons/{}/archive", "json"},
	{"POST", "/v1/subscriptions/{}/discount", "json"},
	{"POST", "/v1/portal_sessions", "json"},
	{"GET", "/portal/{}", "query"},
	{"GET", "/portal/{ps}/payments/{}", "query"},
	{"GET", "/portal/{ps}/payments", "query"},
	{"POST", "/portal/{ps}/subscriptions/{}/cancel", "form"},
	{"POST", "/portal/{ps}/subscriptions/{}/discount", "form"},
	{"POST", "/checkout/{}/authorization?at=now&plan=price_x", "json"},
	{"GET", "/dashboard/invoices", "query"},
	{"GET", "/dashboard/invoices/{}", "query"},
	{"GET", "/dashboard/subscriptions", "query"},
	{"GET", "/dashboard/subscriptions/{}", "query"},
	{"GET", "/dashboard/customers", "query"},
	{"GET", "/dashboard/customers/{}", "query"},
	{"POST", "/checkout/{}/authorization?coupon=%00%E2%80%AEcode", "json"},
	{"POST", "/portal/{ps}/subscriptions/{}/undo-cancel", "form"},
	{"GET", "/dashboard/webhooks/{}", "query"},
	{"POST", "/dashboard/webhooks/{}/deliveries/x/resend", "form"},
	{"POST", "/dashboard/payments/{}/refund", "form"},
}

// FuzzHTTP drives the daemon's handlers, over a real database, with
// requests built from fuzz input: a route, a path segment, a body (or form,
// or query) and an Idempotency-Key header. Whatever arrives, nothing
// answers 5xx, every answer carries wc-version, and every error of the API
// is the JSON envelope (the checkout page's not-found is HTML; the OAuth
// endpoints answer in OAuth's own format).
func FuzzHTTP(f *testing.F) {
	b := setup(f, func(c *daemon.Config) { c.RateLimits = false })
	merchant := b.merchant("acme")
	_, key := b.key(merchant, tenant.Test)
	c := b.client(key)
	ctx := context.Background()
	// A dashboard user's session: its cookie goes with the dashboard's
	// routes.
	b.dashUser(f, merchant, "ops@example.com")
	dash, err := users.SignIn(ctx, b.db, "127.0.0.1", users.SignInInput{Email: "ops@example.com", Password: dashPassword}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	dashCSRF := "csrf_token=" + web.CSRFToken(dash.Token)
	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1000000", Description: "Fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	m, err := c.CreateMeter(ctx, client.MeterParams{Key: "api_calls", DisplayName: "API calls", EventValueKey: "n"})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := c.CreateMeter(ctx, client.MeterParams{Key: "logins", DisplayName: "Logins", Aggregation: "count"}); err != nil {
		f.Fatal(err)
	}
	for _, p := range []client.FeatureParams{{Key: "sso", Name: "SSO"}, {Key: "calls", Name: "Calls", Type: "metered", Meter: m.ID}} {
		if _, err := c.CreateFeature(ctx, p); err != nil {
			f.Fatal(err)
		}
	}
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000", ExternalCustomerID: "u1"})
	if err != nil {
		f.Fatal(err)
	}
	cus := g.CustomerID
	ps, err := c.CreatePortalSession(ctx, client.PortalSessionParams{CustomerID: cus})
	if err != nil {
		f.Fatal(err)
	}
	portalToken := strings.TrimPrefix(ps.URL, b.url+"/portal/")

	for _, s := range []struct {
		route  uint8
		seg    string
		input  string
		header string
	}{
		{0, "", `{"amount":"9000000","description":"Pro","memo":"m","due_at":"2030-01-01T00:00:00-23:59"}`, ""},
		{0, "", `{"amount":1,"description":"x","amount":2}`, ""},
		{1, "", "limit=2&before=2026-07-01T00:00:00.000000123Z", ""},
		{2, "", `{"key":"m.2","display_name":"M","aggregation":"max","event_value_key":"v"}`, ""},
		{4, "", `{"key":"f2","name":"F","type":"metered","meter":"` + m.ID + `"}`, ""},
		{5, "", `{"event_name":"api_calls","external_customer_id":"u1","properties":{"n":3,"x":[1e5,"\ud83d\ude00"]},"idempotency_key":"k"}`, ""},
		{5, "", `{"events":[{"event_name":"logins","customer_id":"` + cus + `"},{"event_name":"api_calls","value":"1","properties":{"a":"\ud800"}}]}`, ""},
		{5, "", `{"event_name":"logins","external_customer_id":"u2"}`, "hdr-1"},
		{6, "", `{"amount":5,"customer_id":"` + cus + `","expires_at":"2031-01-01T00:00:00Z","idempotency_key":"g"}`, ""},
		{7, "", `{"amount":5,"external_customer_id":"u1","allow_negative":true}`, "d-1"},
		{8, "", `{"feature_key":"calls","customer_id":"` + cus + `","limit_value":10,"active_until":"2020-01-01T00:00:00Z"}`, ""},
		{9, cus, "", ""},
		{9, "cus_\xff\x00", "", ""},
		{11, "calls", "", ""},
		{12, cus, "", ""},
		{13, "", "limit=100&before=9999-12-31T23:59:59Z", ""},
		{15, "", "customer_id=" + cus, ""},
		{16, "payments", `{}`, ""},
		{17, "inv_x", "", ""},
		{18, "", `{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x"}`, ""},
		{19, "", "grant_type=authorization_code&code=x&client_id=y&code_verifier=z", ""},
		{20, "", "token=x", ""},
		{21, "", "response_type=code&client_id=x&redirect_uri=http://127.0.0.1/cb&code_challenge=abc&code_challenge_method=S256", ""},
		{22, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{fuzzRouteN("POST", "/api/mcp"), "", `"0"`, ""},
		{fuzzRouteN("POST", "/api/mcp"), "", `{"jsonrpc":"2.0","id":[],"method":7}`, ""},
		{23, "", "client_id=tgc_x&redirect_uri=http://127.0.0.1/cb&response_type=code&decision=allow&secret_key=sk_test_x", ""},
		{24, "", `{"name":"Pro","amount":"1000000","interval":"custom","interval_days":30,"features":["sso",{"feature_key":"calls","limit_value":5}]}`, ""},
		{24, "", `{"name":"Metered","interval":"month","usage_type":"metered","meter":"` + m.ID + `","pricing":{"model":"graduated","tiers":[{"up_to":"10","unit_amount":"1"},{"unit_amount":"0.5"}]}}`, ""},
		{25, "inv_\x00", "", ""},
		{26, "inv_x", `{}`, ""},
		{27, "pay_x", "", ""},
		{28, "sub_\xff", "", ""},
		{29, "sub_x", `{"at_period_end":false}`, ""},
		{30, "sub_x", "", ""},
		{32, "", `{"by":"720h"}`, ""},
		{32, "", `{"to":"9999-12-31T23:59:59Z"}`, ""},
		{33, "inv_x", "payer=0x4242424242424242424242424242424242424242&external_customer_id=u1", ""},
		{34, "inv_x", "payer=0x4242424242424242424242424242424242424242", ""},
		{35, "inv_x", `{"payer":"0x4242424242424242424242424242424242424242"}`, ""},
		{36, "", "meter=api_calls&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&window=day", ""},
		{36, "", "meter=logins&window=hour&from=1000-01-01T00:00:00Z", ""},
		{36, "", "meter=%00&to=99999999999999999999", ""},
		{37, cus, "meter=" + m.ID + "&window=month", ""},
		{37, "cus_\xff", "meter=x", ""},
		{38, "me_x", "", ""},
		{38, "me_\x00", "", ""},
		{39, "", `{"type":"usage_threshold","meter":"` + m.ID + `","threshold":"18446744073709551616"}`, ""},
		{39, "", `{"type":"spend_threshold","percent":1e2,"customer_id":"` + cus + `","name":"\u0000"}`, ""},
		{39, "", `{"type":"credit_balance_below","threshold":5,"external_customer_id":"u9"}`, ""},
		{40, "", "limit=3", ""},
		{41, "alert_x", "", ""},
		{fuzzRouteN("POST", "/v1/portal_sessions"), "", `{"customer_id":"` + cus + `","plans":["price_x"],"return_url":"https://a.example/"}`, ""},
		{fuzzRouteN("GET", "/portal/{}"), portalToken, "done=canceled", ""},
		{fuzzRouteN("GET", "/portal/{}"), "\x00", "", ""},
		{fuzzRouteN("GET", "/portal/{ps}/payments/{}"), "pay_x", "", ""},
		{fuzzRouteN("GET", "/portal/{ps}/payments"), "", "before=2026-01-01T00:00:00Z", ""},
		{fuzzRouteN("POST", "/portal/{ps}/subscriptions/{}/cancel"), "sub_x", "csrf_token=x", ""},
		{fuzzRouteN("POST", "/portal/{ps}/subscriptions/{}/discount"), "sub_x", "csrf_token=" + web.CSRFToken(portalToken) + "&code=LAUNCH", ""},
		{fuzzRouteN("POST", "/portal/{ps}/subscriptions/{}/discount"), "sub_\x00", "csrf_token=" + web.CSRFToken(portalToken) + "&code=%00&code=", ""},
		{fuzzRouteN("GET", "/checkout/{}/authorization"), "sub_x", "plan=price_x&at=period_end&payer=0x4242424242424242424242424242424242424242", ""},
		{fuzzRouteN("GET", "/checkout/{}/authorization"), "sub_x", "plan=%00&at=later&payer=0x", ""},
		{fuzzRouteN("POST", "/checkout/{}/authorization?at=now&plan=price_x"), "sub_x", `{"plan":{"payer":"0x4242424242424242424242424242424242424242","payee":"0x1","token":"0x2","capPerPeriod":"1","period":"86400","start":"0","end":"18446744073709551615","salt":"0x00"},"signature":"0x00","permit":{"value":"1","deadline":"1","signature":"0x"}}`, ""},
		{fuzzRouteN("POST", "/checkout/{}/authorization?at=now&plan=price_x"), "sub_\xff", `{"plan":[],"signature":1}`, ""},
		{fuzzRouteN("GET", "/dashboard/invoices"), "", "limit=1&before=2026-07-01T00:00:00.000000123Z", ""},
		{fuzzRouteN("GET", "/dashboard/invoices/{}"), inv.ID, "", ""},
		{fuzzRouteN("GET", "/dashboard/invoices/{}"), "inv_\x00", "", ""},
		{fuzzRouteN("GET", "/dashboard/subscriptions"), "", "limit=101", ""},
		{fuzzRouteN("GET", "/dashboard/subscriptions/{}"), "sub_x", "before=9999-12-31T23:59:59Z", ""},
		{fuzzRouteN("GET", "/dashboard/customers"), "", "before=yesterday", ""},
		{fuzzRouteN("GET", "/dashboard/customers/{}"), cus, "", ""},
		{fuzzRouteN("GET", "/dashboard/customers/{}"), "cus_\xff", "", ""},
		{fuzzRouteN("GET", "/dashboard/webhooks/{}"), "we_x", "before=2026-01-01T00:00:00.000000123Z&limit=3", ""},
		{fuzzRouteN("GET", "/dashboard/webhooks/{}"), "we_\x00", "limit=0", ""},
		{fuzzRouteN("POST", "/dashboard/webhooks/{}/deliveries/x/resend"), "we_x", dashCSRF, ""},
		{fuzzRouteN("POST", "/dashboard/payments/{}/refund"), "pay_x", dashCSRF + "&amount=2usdc&reason=r", ""},
		{fuzzRouteN("POST", "/dashboard/payments/{}/refund"), "pay_x", dashCSRF + "&confirm=yes&amount=%00&valid_before=99999999999999999999&signature=0xzz&key=ref", ""},
	} {
		f.Add(s.route, s.seg, []byte(s.input), s.header)
	}

	f.Fuzz(func(t *testing.T, routeN uint8, seg string, input []byte, header string) {
		rt := fuzzRoutes[int(routeN)%len(fuzzRoutes)]
		path := strings.ReplaceAll(strings.ReplaceAll(rt.path, "{cus}", cus), "{ps}", portalToken)
		path = strings.ReplaceAll(path, "{}", url.PathEscape(seg))
		var body io.Reader
		ctype := ""
		switch rt.input {
		case "json":
			body, ctype = bytes.NewReader(input), "application/json"
		case "form":
			body, ctype = strings.NewReader(escapeQuery(string(input))), "application/x-www-form-urlencoded"
		case "query":
			path += "?" + escapeQuery(string(input))
		}
		req, err := http.NewRequest(rt.method, b.url+path, body)
		if err != nil {
			return // not a request a client could send
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Origin", b.url) // the consent form refuses other sites
		if header != "" {
			req.Header.Set("Idempotency-Key", header)
		}
		if strings.HasPrefix(rt.path, "/dashboard/") {
			req.AddCookie(&http.Cookie{Name: "tollgate_dashboard", Value: dash.Token})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if strings.Contains(err.Error(), "invalid header field value") {
				return // the client refuses the header: nothing was sent
			}
			t.Fatalf("%s %s: %v", rt.method, path, err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %.200s: %d %.500s", rt.method, path, resp.StatusCode, out)
		}
		if resp.Header.Get("wc-version") != daemon.APIVersion {
			t.Fatalf("%s %.200s: no wc-version", rt.method, path)
		}
		if strings.HasPrefix(rt.path, "/dashboard/") && resp.Request.URL.Path == "/dashboard/sign-in" {
			t.Fatalf("%s %.200s: sent to sign in: the session was not taken", rt.method, path)
		}
		if resp.StatusCode < 400 {
			return
		}
		switch {
		case (strings.HasPrefix(rt.path, "/checkout/") || strings.HasPrefix(rt.path, "/portal/") || strings.HasPrefix(rt.path, "/dashboard/")) &&
			strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"):
		case strings.HasPrefix(rt.path, "/oauth/") && strings.Contains(string(out), `"error":"`):
		case rt.path == "/oauth/authorize" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"):
		case rt.path == "/api/mcp" && isRPCError(out):
			// A body that is not a JSON-RPC message is refused as a
			// JSON-RPC peer expects: a 400 whose body is a JSON-RPC error.
		default:
			var e struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(out, &e) != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %.200s: %d without the error envelope: %.500s", rt.method, path, resp.StatusCode, out)
			}
		}
	})
}

// isRPCError reports whether body is a JSON-RPC 2.0 error response: a
// numeric code and a message.
func isRPCError(body []byte) bool {
	var r struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &r) == nil && r.JSONRPC == "2.0" && r.Error != nil && r.Error.Code != nil && r.Error.Message != ""
}

// fuzzRouteN is the number of the route with method and path, for a seed:
// a number written by hand goes stale when a route is added before it.
func fuzzRouteN(method, path string) uint8 {
	for i, rt := range fuzzRoutes {
		if rt.method == method && rt.path == path {
			return uint8(i)
		}
	}
	panic("no fuzz route " + method + " " + path)
}

// escapeQuery turns arbitrary text into a query string with the same
// parameters, whatever bytes they hold: names and values percent-encoded,
// & and = kept as separators.
func escapeQuery(s string) string {
	pairs := strings.Split(s, "&")
	for i, p := range pairs {
		k, v, found := strings.Cut(p, "=")
		pairs[i] = url.QueryEscape(k)
		if found {
			pairs[i] += "=" + url.QueryEscape(v)
		}
	}
	return strings.Join(pairs, "&")
}

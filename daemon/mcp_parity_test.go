package daemon_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/tenant"
)

// For every tool, the tool and its REST endpoint give the same answer and
// the same error for the same input. Two merchants start alike; each case
// runs over REST for one and as a tool call for the other, so both evolve
// the same way, and the answers must agree but for ids and times.
func TestMCPToolsMatchREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, restKey := b.key(b.merchant("rest"), tenant.Test)
	_, toolKey := b.key(b.merchant("tools"), tenant.Test)
	s := b.mcpSession(t, toolKey, "")
	long := strings.Repeat("é", 501)

	type tcase struct {
		tool string
		args string // JSON; {cus} is the merchant's customer u_1
		// code is the error both must answer, "" for success.
		code string
	}
	cases := []tcase{
		{"create_invoice", `{"amount":"9000000","description":"Consulting"}`, ""},
		{"create_invoice", `{"amount":9000000,"description":"Audit","memo":"m","invoice_number":"A-1","recipient":"a@b.c","due_at":"2030-01-01T00:00:00Z"}`, ""},
		{"create_invoice", `{"amount":-1,"description":"x"}`, "invalid_request"},
		{"create_invoice", `{"amount":"1.5","description":"x"}`, "invalid_request"},
		{"create_invoice", `{"amount":1e6,"description":"x"}`, "invalid_request"},
		{"create_invoice", `{"description":"x"}`, "invalid_request"},
		{"create_invoice", `{"amount":1,"description":""}`, "invalid_request"},
		{"create_invoice", `{"amount":1,"description":"` + long + `"}`, "invalid_request"},
		{"create_invoice", `{"amount":1,"description":"x","colour":"red"}`, "invalid_request"},
		{"create_invoice", `{"amount":1,"description":"x","due_at":"tomorrow"}`, "invalid_request"},
		{"create_meter", `{"key":"calls","display_name":"Calls","aggregation":"count"}`, ""},
		{"create_meter", `{"key":"calls","display_name":"Calls again"}`, ""},
		{"create_meter", `{"key":"tokens","display_name":"Tokens","unit_label":"tokens"}`, ""},
		{"create_meter", `{"key":"bad key!","display_name":"x"}`, "invalid_request"},
		{"create_meter", `{"key":"k","display_name":"x","aggregation":"avg"}`, "invalid_request"},
		{"create_feature", `{"key":"beta","name":"Beta"}`, ""},
		{"create_feature", `{"key":"api","name":"API","type":"metered"}`, "invalid_request"},
		{"create_feature", `{"key":"api","name":"API","type":"metered","meter":"meter_nope"}`, "invalid_request"},
		{"create_meter_event", `{"event_name":"calls","external_customer_id":"u_1","idempotency_key":"e1"}`, ""},
		{"create_meter_event", `{"event_name":"calls","external_customer_id":"u_1","idempotency_key":"e1"}`, ""},
		{"create_meter_event", `{"event_name":"tokens","external_customer_id":"u_1","value":"250","timestamp":"2026-01-01T00:00:00Z"}`, "invalid_request"},
		{"create_meter_event", `{"event_name":"tokens","external_customer_id":"u_1","value":"250"}`, ""},
		{"create_meter_event", `{"event_name":"tokens","external_customer_id":"u_1"}`, "missing_value"},
		{"create_meter_event", `{"event_name":"nope","external_customer_id":"u_1"}`, "unknown_meter"},
		{"create_meter_event", `{"event_name":"calls","customer_id":"cus_missing"}`, "unknown_customer"},
		{"create_meter_event", `{"event_name":"calls","value":"-1"}`, "invalid_request"},
		{"grant_credits", `{"amount":5000000,"external_customer_id":"u_1","reason":"welcome"}`, ""},
		{"grant_credits", `{"amount":"1000000","customer_id":"{cus}","idempotency_key":"g1"}`, ""},
		{"grant_credits", `{"amount":"1000000","customer_id":"{cus}","idempotency_key":"g1"}`, ""},
		{"grant_credits", `{"amount":"2000000","customer_id":"{cus}","idempotency_key":"g1"}`, "invalid_request"},
		{"grant_credits", `{"amount":1}`, "customer_required"},
		{"grant_credits", `{"amount":0,"customer_id":"{cus}"}`, "invalid_request"},
		{"grant_credits", `{"amount":1,"customer_id":"cus_nope"}`, "unknown_customer"},
		{"grant_credits", `{"amount":1,"customer_id":"{cus}","expires_at":"2001-01-01T00:00:00Z"}`, "invalid_request"},
		{"debit_credits", `{"amount":"2000000","external_customer_id":"u_1"}`, ""},
		{"debit_credits", `{"amount":"9000000","customer_id":"{cus}"}`, ""},
		{"debit_credits", `{"amount":"1","customer_id":"{cus}","allow_negative":true}`, ""},
		{"debit_credits", `{"amount":"1","customer_id":"{cus}","allow_negative":"yes"}`, "invalid_request"},
		{"debit_credits", `{"amount":1,"external_customer_id":"u_2"}`, "no_credit_account"},
		{"debit_credits", `{"amount":1}`, "customer_required"},
		{"get_credit_balance", `{"customer_id":"{cus}"}`, ""},
		{"get_credit_balance", `{"customer_id":"cus_nope"}`, "unknown_customer"},
		{"create_feature", `{"key":"api","name":"API","type":"metered","meter":"{meter}"}`, ""},
		{"grant_entitlement", `{"feature_key":"api","external_customer_id":"u_1","limit_value":"100"}`, ""},
		{"grant_entitlement", `{"feature_key":"beta","customer_id":"{cus}","active_until":"2099-01-01T00:00:00Z"}`, ""},
		{"grant_entitlement", `{"feature_key":"nope","customer_id":"{cus}"}`, "unknown_feature"},
		{"grant_entitlement", `{"feature_key":"api"}`, "customer_required"},
		{"grant_entitlement", `{"feature_key":"api","customer_id":"{cus}","limit_value":-1}`, "invalid_request"},
		{"check_entitlement", `{"customer_id":"{cus}","feature_key":"api"}`, ""},
		{"check_entitlement", `{"customer_id":"{cus}","feature_key":"beta"}`, ""},
		{"check_entitlement", `{"customer_id":"{cus}","feature_key":"nope"}`, "unknown_feature"},
		{"check_entitlement", `{"customer_id":"cus_nope","feature_key":"api"}`, "unknown_customer"},
		{"get_usage", `{"customer_id":"{cus}","meter":"calls"}`, ""},
		{"get_usage", `{"customer_id":"{cus}","meter":"{meter}","from":"2026-01-01T00:00:00Z","to":"2026-01-03T00:00:00Z","window":"day"}`, ""},
		{"get_usage", `{"customer_id":"{cus}","meter":"calls","from":"2026-01-03T00:00:00Z","to":"2026-01-03T00:00:00Z"}`, "invalid_request"},
		{"get_usage", `{"customer_id":"{cus}","meter":"calls","from":"2020-01-01T00:00:00Z","to":"2026-01-03T00:00:00Z","window":"hour"}`, "invalid_request"},
		{"get_usage", `{"customer_id":"{cus}","meter":"calls","window":"week"}`, "invalid_request"},
		{"get_usage", `{"customer_id":"{cus}","meter":"nope"}`, "unknown_meter"},
		{"get_usage", `{"customer_id":"cus_nope","meter":"calls"}`, "unknown_customer"},
		{"cancel_meter_event", `{"id":"me_nope"}`, "resource_not_found"},
		{"create_alert", `{"type":"usage_threshold","meter":"{meter}","threshold":10,"customer_id":"{cus}","name":"ten calls"}`, ""},
		{"create_alert", `{"type":"credit_balance_below","threshold":"1000000"}`, ""},
		{"create_alert", `{"type":"spend_threshold","percent":80}`, ""},
		{"create_alert", `{"type":"spend_threshold","percent":101}`, "invalid_request"},
		{"create_alert", `{"type":"usage_threshold","meter":"{meter}","threshold":-1}`, "invalid_request"},
		{"create_alert", `{"type":"usage_threshold","meter":"meter_nope","threshold":1}`, "unknown_meter"},
		{"create_alert", `{"type":"credit_balance_below","threshold":1,"customer_id":"cus_nope"}`, "unknown_customer"},
		{"list_alerts", `{"limit":2}`, ""},
		{"create_coupon", `{"percent_off":20,"duration":"repeating","duration_in_periods":3,"code":"LAUNCH","name":"Launch"}`, ""},
		{"create_coupon", `{"amount_off":"500000","duration":"forever","max_redemptions":10,"redeem_by":"2099-01-01T00:00:00Z"}`, ""},
		{"create_coupon", `{"percent_off":20,"duration":"once","code":"launch"}`, "invalid_request"},
		{"create_coupon", `{"percent_off":20,"amount_off":1,"duration":"once"}`, "invalid_request"},
		{"create_coupon", `{"percent_off":20,"duration":"repeating"}`, "invalid_request"},
		{"create_coupon", `{"duration":"once"}`, "invalid_request"},
		{"list_coupons", `{"limit":2}`, ""},
		{"create_portal_session", `{"customer_id":"{cus}","return_url":"https://example.com/account"}`, ""},
		{"create_portal_session", `{"external_customer_id":"nobody"}`, "unknown_customer"},
		{"create_portal_session", `{"customer_id":"{cus}","return_url":"http://example.com/"}`, "invalid_request"},
		{"create_portal_session", `{"customer_id":"{cus}","plans":["price_nope"]}`, "invalid_request"},
		{"list_invoices", `{}`, ""},
		{"list_invoices", `{"limit":1}`, ""},
		{"list_invoices", `{"limit":0}`, "invalid_request"},
		{"list_invoices", `{"limit":101}`, "invalid_request"},
		{"list_invoices", `{"before":"yesterday"}`, "invalid_request"},
		{"list_invoices", `{"before":"2001-01-01T00:00:00Z"}`, ""},
		{"list_meters", `{"limit":"2"}`, ""},
		{"list_events", `{"limit":100}`, ""},
		{"list_payments", `{}`, ""},
		{"list_subscriptions", `{"limit":5}`, ""},
		{"create_plan", `{"name":"Team","amount":"2000000","interval":"month","features":["beta"]}`, ""},
		{"create_plan", `{"name":"Usage","amount":5000000,"interval":"custom","interval_days":10,"usage_type":"metered","meter":"{meter}","pricing_model":{"kind":"per_unit","unitAmount":1000}}`, ""},
		{"create_plan", `{"name":"Cheap","amount":999999,"interval":"month"}`, "amount_too_small"},
		{"create_plan", `{"name":"Odd","amount":1000000,"interval":"custom"}`, "invalid_interval"},
		{"create_plan", `{"name":"Usage","amount":1000000,"interval":"week","usage_type":"metered"}`, "invalid_request"},
		{"get_invoice", `{"id":"inv_nope"}`, "resource_not_found"},
		{"get_payment", `{"id":"pay_nope"}`, "resource_not_found"},
		{"get_subscription", `{"id":"sub_nope"}`, "resource_not_found"},
		{"change_subscription", `{"id":"sub_nope","plan":"price_nope"}`, "resource_not_found"},
		{"change_subscription", `{"id":"sub_nope","plan":"price_nope","colour":"red"}`, "invalid_request"},
		{"change_subscription", `{"id":"sub_nope"}`, "invalid_request"},
		{"preview_subscription_change", `{"id":"sub_nope","plan":"price_nope","at":"now"}`, "resource_not_found"},
		{"preview_subscription_change", `{"id":"sub_nope","plan":"price_nope","at":"soon"}`, "invalid_request"},
		{"advance_test_clock", `{"by":"1h"}`, ""},
		{"advance_test_clock", `{"by":"soon"}`, "invalid_request"},
		{"advance_test_clock", `{"to":"2001-01-01T00:00:00Z"}`, "invalid_request"},
	}
	seen := map[string]bool{}
	for i, c := range cases {
		seen[c.tool] = true
		restArgs, toolArgs := b.fill(restKey, c.args), b.fill(toolKey, c.args)
		status, body := b.restFor(restKey, c.tool, restArgs)
		var rest map[string]any
		if err := json.Unmarshal([]byte(body), &rest); err != nil {
			t.Fatalf("case %d %s %s: REST answered %d %s", i, c.tool, c.args, status, body)
		}
		// The arguments go as written: 1e6 stays 1e6.
		got, isErr := callTool(t, s, c.tool, json.RawMessage(toolArgs))
		if (status >= 400) != isErr || (c.code == "") != !isErr {
			t.Fatalf("case %d %s %s: REST %d %s, tool error %v %v", i, c.tool, c.args, status, body, isErr, got)
		}
		if c.code != "" && rest["error"].(map[string]any)["code"] != c.code {
			t.Fatalf("case %d %s %s: want %s, REST answered %s", i, c.tool, c.args, c.code, body)
		}
		if r, g := normalize(rest), normalize(got); r != g {
			t.Fatalf("case %d %s %s:\nREST %d %s\ntool      %s", i, c.tool, c.args, status, r, g)
		}
	}
	for _, name := range wantTools {
		if !seen[name] {
			t.Errorf("no case for %s", name)
		}
	}
}

// fill puts the merchant's own ids in a case's arguments.
func (b *bundle) fill(key, args string) string {
	if strings.Contains(args, "{cus}") {
		_, _, body := b.raw("GET", "/v1/customers/u_1", key, "")
		var c struct{ ID string }
		_ = json.Unmarshal([]byte(body), &c)
		args = strings.ReplaceAll(args, "{cus}", c.ID)
	}
	if strings.Contains(args, "{meter}") {
		_, _, body := b.raw("GET", "/v1/meters", key, "")
		var l struct{ Data []struct{ ID, Key string } }
		_ = json.Unmarshal([]byte(body), &l)
		for _, m := range l.Data {
			if m.Key == "calls" {
				args = strings.ReplaceAll(args, "{meter}", m.ID)
			}
		}
	}
	return args
}

// restFor sends a tool's arguments to its REST counterpart.
func (b *bundle) restFor(key, tool, args string) (int, string) {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	str := func(k string) string { s, _ := a[k].(string); return url.PathEscape(s) }
	var status int
	var body string
	switch tool {
	case "get_credit_balance":
		status, _, body = b.raw("GET", "/v1/customers/"+str("customer_id")+"/credit_balance", key, "")
	case "get_invoice", "get_payment", "get_subscription":
		status, _, body = b.raw("GET", "/v1/"+strings.TrimPrefix(tool, "get_")+"s/"+str("id"), key, "")
	case "get_usage":
		q := url.Values{}
		for k, v := range a {
			if k != "customer_id" {
				q.Set(k, v.(string))
			}
		}
		status, _, body = b.raw("GET", "/v1/customers/"+str("customer_id")+"/usage?"+q.Encode(), key, "")
	case "change_subscription", "preview_subscription_change":
		body := map[string]any{}
		for k, v := range a {
			if k != "id" {
				body[k] = v
			}
		}
		if tool == "preview_subscription_change" {
			body["preview"] = true
		}
		status, _, body2 := b.raw("POST", "/v1/subscriptions/"+str("id")+"/change", key, mustJSON(body))
		return status, body2
	case "cancel_meter_event":
		status, _, body = b.raw("POST", "/v1/meter-events/"+str("id")+"/cancel", key, "")
	case "check_entitlement":
		status, _, body = b.raw("GET", "/v1/customers/"+str("customer_id")+"/entitlements/"+str("feature_key"), key, "")
	default:
		if noun, ok := strings.CutPrefix(tool, "list_"); ok {
			q := url.Values{}
			for k, v := range a {
				q.Set(k, strings.Trim(mustJSON(v), `"`))
			}
			status, _, body = b.raw("GET", "/v1/"+noun+"?"+q.Encode(), key, "")
			break
		}
		path := map[string]string{
			"create_invoice": "/v1/invoices", "create_meter": "/v1/meters", "create_feature": "/v1/features",
			"create_meter_event": "/v1/meter-events", "grant_credits": "/v1/credit_grants", "debit_credits": "/v1/credit_debits",
			"grant_entitlement": "/v1/entitlement_grants", "create_plan": "/v1/plans", "advance_test_clock": "/v1/test_helpers/clock/advance",
			"create_alert": "/v1/alerts", "create_coupon": "/v1/coupons", "create_portal_session": "/v1/portal_sessions",
		}[tool]
		status, _, body = b.raw("POST", path, key, args)
	}
	return status, body
}

var (
	idPattern   = regexp.MustCompile(`\b([a-z]+)_[A-Za-z0-9]{16,}\b`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	// portalLink is a portal session's secret link.
	portalLink = regexp.MustCompile(`/portal/[A-Za-z0-9]{43}`)
)

// normalize is a JSON answer with ids and times of day replaced, for
// comparing the answers of two merchants.
func normalize(m map[string]any) string {
	raw, _ := json.Marshal(m)
	s := idPattern.ReplaceAllString(portalLink.ReplaceAllString(string(raw), "/portal/<token>"), "${1}_*")
	return timePattern.ReplaceAllString(s, "<time>")
}

package daemon_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
)

// GET /openapi.json needs no key and describes every /v1 route of the route
// table (a route added without its entry fails here), the bearer scheme,
// the error envelope, and each event type's webhook.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, missing, err := b.d.Server.OpenAPI()
	if err != nil || len(missing) > 0 {
		t.Fatalf("routes of the route table missing from /openapi.json: %v (%v)", missing, err)
	}
	status, h, body := b.raw("GET", "/openapi.json", "", "")
	if status != 200 || h.Get("wc-version") != daemon.APIVersion || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %v", status, h)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct{ Version string }
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]any
			RequestBody any `json:"requestBody"`
		}
		Webhooks   map[string]any
		Components struct {
			Schemas         map[string]any
			SecuritySchemes map[string]struct{ Type, Scheme string } `json:"securitySchemes"`
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Fatalf("openapi %s, info.version %s", doc.OpenAPI, doc.Info.Version)
	}
	if s := doc.Components.SecuritySchemes["bearer"]; s.Type != "http" || s.Scheme != "bearer" {
		t.Fatalf("bearer scheme: %+v", s)
	}
	want := map[string][]string{
		"/v1/invoices": {"get", "post"}, "/v1/meters": {"get", "post"}, "/v1/features": {"post"}, "/v1/meter-events": {"post"},
		"/v1/credit_grants": {"post"}, "/v1/credit_debits": {"post"}, "/v1/customers/{customer}/credit_balance": {"get"},
		"/v1/entitlement_grants": {"post"}, "/v1/customers/{customer}/entitlements/{feature_key}": {"get"},
		"/v1/payments": {"get"}, "/v1/subscriptions": {"get"}, "/v1/events": {"get"},
	}
	for path, methods := range want {
		for _, m := range methods {
			op, ok := doc.Paths[path][m]
			if !ok {
				t.Errorf("%s %s is not described", m, path)
				continue
			}
			if op.Responses["401"] == nil || op.Responses["429"] == nil || op.Responses["default"] == nil {
				t.Errorf("%s %s: responses %v lack 401, 429 or default", m, path, op.Responses)
			}
			if (m == "post") != (op.RequestBody != nil) {
				t.Errorf("%s %s: request body %v", m, path, op.RequestBody)
			}
		}
	}
	for path := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			t.Errorf("%s is not a /v1 path", path)
		}
	}
	for _, typ := range events.Types() {
		if doc.Webhooks[typ] == nil {
			t.Errorf("no webhook for %s", typ)
		}
	}
	for _, name := range []string{"Error", "Invoice", "InvoiceRequest", "CreditBalance", "Entitlement"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("no schema %s", name)
		}
	}
	if !slices.Contains(doc.Components.Schemas["Invoice"].(map[string]any)["required"].([]any), any("checkout_url")) {
		t.Error("Invoice does not require checkout_url")
	}
}

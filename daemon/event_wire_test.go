package daemon_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Every event's data is the REST object of the same change (DESIGN.md,
// "Money path"): the operation encodes both with the one wire form. For each
// event type emitted today, the change is made through the API and the
// event's data compared with the response.
func TestEventDataIsTheRESTObject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.key(b.merchant("acme"), tenant.Test)
	post := func(path, body string) map[string]any {
		t.Helper()
		status, _, out := b.raw("POST", path, key, body)
		if status/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, status, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	post("/v1/meters", `{"key":"calls","display_name":"Calls","aggregation":"count"}`)
	want := map[string]map[string]any{
		events.CreditGranted: post("/v1/credit_grants", `{"amount":5000000,"external_customer_id":"u1","expires_at":"2099-01-01T00:00:00Z"}`),
		events.CreditDebited: post("/v1/credit_debits", `{"amount":7000000,"external_customer_id":"u1"}`),
		events.EntitlementGranted: func() map[string]any {
			post("/v1/features", `{"key":"api","name":"API","type":"boolean"}`)
			return post("/v1/entitlement_grants", `{"feature_key":"api","external_customer_id":"u1","active_until":"2099-01-01T00:00:00.5Z"}`)
		}(),
	}
	status, _, out := b.raw("GET", "/v1/events?limit=100", key, "")
	if status != 200 {
		t.Fatalf("events: %d %s", status, out)
	}
	var list struct {
		Data []struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range list.Data {
		w, ok := want[ev.Type]
		if !ok {
			t.Errorf("unexpected event type %s", ev.Type)
			continue
		}
		seen[ev.Type] = true
		if !reflect.DeepEqual(ev.Data, w) {
			t.Errorf("%s: event data\n%v\nREST object\n%v", ev.Type, ev.Data, w)
		}
	}
	for typ := range want {
		if !seen[typ] {
			t.Errorf("no %s event", typ)
		}
	}
}

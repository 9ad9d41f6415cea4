package apispec_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/testclock"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Each request type names exactly the fields its decoder reads, so the
// schemas generated from it describe what the API accepts.
func TestRequestTypesMatchDecoders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ    reflect.Type
		decode func(*fields.Object) error
	}{
		{reflect.TypeFor[wire.InvoiceRequest](), func(o *fields.Object) error { _, err := invoices.Decode(o); return err }},
		{reflect.TypeFor[wire.MeterRequest](), func(o *fields.Object) error { _, err := metering.Decode(o); return err }},
		{reflect.TypeFor[wire.FeatureRequest](), func(o *fields.Object) error { _, err := features.Decode(o); return err }},
		{reflect.TypeFor[wire.MeterEventRequest](), func(o *fields.Object) error { _, err := metering.DecodeEvent(o); return err }},
		{reflect.TypeFor[wire.CreditGrantRequest](), func(o *fields.Object) error { _, err := credits.DecodeGrant(o); return err }},
		{reflect.TypeFor[wire.CreditDebitRequest](), func(o *fields.Object) error { _, err := credits.DecodeDebit(o); return err }},
		{reflect.TypeFor[wire.EntitlementGrantRequest](), func(o *fields.Object) error { _, err := entitlements.Decode(o); return err }},
		{reflect.TypeFor[wire.ListParams](), func(o *fields.Object) error { _, err := page.DecodeArgs(o); return err }},
		{reflect.TypeFor[wire.PlanRequest](), func(o *fields.Object) error { _, err := plans.Decode(o); return err }},
		{reflect.TypeFor[wire.CancelRequest](), func(o *fields.Object) error { _, err := subscriptions.DecodeCancel(o); return err }},
		{reflect.TypeFor[wire.ClockAdvanceRequest](), func(o *fields.Object) error { _, err := testclock.DecodeAdvance(o); return err }},
		{reflect.TypeFor[wire.CheckoutPayRequest](), func(o *fields.Object) error { _, err := checkout.Decode(o); return err }},
		{reflect.TypeFor[wire.CouponRequest](), func(o *fields.Object) error { _, err := coupons.Decode(o); return err }},
		{reflect.TypeFor[wire.DiscountRequest](), func(o *fields.Object) error { _, err := subscriptions.DecodeDiscount(o); return err }},
	}
	for _, c := range cases {
		s := apispec.Inline().Request(c.typ)
		var props []string
		for name := range s["properties"].(apispec.Schema) {
			props = append(props, name)
		}
		slices.Sort(props)
		o := fields.FromMap(nil)
		err := c.decode(o)
		if got := o.Read(); !slices.Equal(got, props) {
			t.Errorf("%s names %v; its decoder reads %v", c.typ.Name(), props, got)
		}
		// What the schema requires, the decoder requires.
		req, _ := s["required"].([]string)
		if len(req) > 0 && (err == nil || !strings.Contains(err.Error(), req[0])) {
			t.Errorf("%s requires %v; its decoder answers {} with %v", c.typ.Name(), req, err)
		}
	}
}

// The generator's rules: required unless omitempty, nullable pointers,
// closed request objects, amounts as integer or digit strings, tag
// keywords.
func TestGenerator(t *testing.T) {
	t.Parallel()
	in := apispec.Inline().Request(reflect.TypeFor[wire.InvoiceRequest]())
	if in["additionalProperties"] != false || !slices.Equal(in["required"].([]string), []string{"amount", "description"}) {
		t.Fatalf("invoice request: %v", in)
	}
	props := in["properties"].(apispec.Schema)
	if got := mustJSON(t, props["amount"].(apispec.Schema)["anyOf"]); got != `[{"minimum":0,"type":"integer"},{"pattern":"^[0-9]+$","type":"string"}]` {
		t.Errorf("amount: %s", got)
	}
	if d := props["description"].(apispec.Schema); d["minLength"] != 1 || d["maxLength"] != 500 {
		t.Errorf("description: %v", d)
	}
	if d := props["due_at"].(apispec.Schema); d["format"] != "date-time" || d["description"] == nil {
		t.Errorf("due_at: %v", d)
	}
	out := apispec.Inline().Response(reflect.TypeFor[wire.Invoice]())
	if _, closed := out["additionalProperties"]; closed {
		t.Error("responses are open: the API may add fields to its answers")
	}
	if got := mustJSON(t, out["properties"].(apispec.Schema)["memo"]); got != `{"type":["string","null"]}` {
		t.Errorf("memo: %s", got)
	}
	refs := apispec.WithRefs("#/components/schemas/")
	if r := refs.Response(reflect.TypeFor[wire.Invoice]()); r["$ref"] != "#/components/schemas/Invoice" || refs.Defs["Invoice"] == nil {
		t.Errorf("ref: %v", r)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

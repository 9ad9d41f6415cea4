package wire_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The argument decoders of the tools that name an object read exactly the
// fields of their argument types, require what the schemas require, and
// return what was sent.
func TestArgDecoders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ    reflect.Type
		decode func(*fields.Object) (any, error)
		args   string
		want   any
	}{
		{reflect.TypeFor[wire.ObjectArgs](), func(o *fields.Object) (any, error) { return wire.DecodeObjectArgs(o) },
			`{"id":"inv_1"}`, wire.ObjectArgs{ID: "inv_1"}},
		{reflect.TypeFor[wire.CustomerArgs](), func(o *fields.Object) (any, error) { return wire.DecodeCustomerArgs(o) },
			`{"customer_id":"cus_1"}`, wire.CustomerArgs{CustomerID: "cus_1"}},
		{reflect.TypeFor[wire.EntitlementCheckArgs](), func(o *fields.Object) (any, error) { return entitlements.DecodeCheck(o) },
			`{"customer_id":"cus_1","feature_key":"api"}`, entitlements.CheckInput{CustomerID: "cus_1", FeatureKey: "api"}},
	}
	for _, c := range cases {
		s := apispec.Inline().Request(c.typ)
		var props []string
		for name := range s["properties"].(apispec.Schema) {
			props = append(props, name)
		}
		slices.Sort(props)
		o := fields.FromMap(nil)
		_, err := c.decode(o)
		if got := o.Read(); !slices.Equal(got, props) {
			t.Errorf("%s names %v; its decoder reads %v", c.typ.Name(), props, got)
		}
		req, _ := s["required"].([]string)
		if len(req) == 0 || message(err) != req[0]+": is required" {
			t.Errorf("%s requires %v; its decoder answers {} with %v", c.typ.Name(), req, err)
		}
		o, err = fields.Decode([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.decode(o)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %s decodes to %+v, %v", c.typ.Name(), c.args, got, err)
		}
		o, _ = fields.Decode([]byte(strings.Replace(c.args, "{", `{"extra":1,`, 1)))
		if _, err := c.decode(o); message(err) != "extra: unknown field" {
			t.Errorf("%s: an unknown field gives %v", c.typ.Name(), err)
		}
		o, _ = fields.Decode([]byte(strings.Replace(c.args, `"`+req[0]+`":"`, `"`+req[0]+`":7,"x":"`, 1)))
		if _, err := c.decode(o); message(err) != req[0]+": must be a string" {
			t.Errorf("%s: a number for a string gives %v", c.typ.Name(), err)
		}
	}
}

// message is an API error's message, or "" for anything else.
func message(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Message
	}
	return ""
}

package daemon

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// FuzzCreateRequests decodes and validates arbitrary bodies as the invoice
// and meter create requests do: never a panic, and every rejection is
// invalid_json or invalid_request — the codes that become 400s.
func FuzzCreateRequests(f *testing.F) {
	for _, s := range []string{
		`{"amount":9000000,"description":"Pro"}`,
		`{"amount":"9000000","description":"x","memo":"m","invoice_number":"1","recipient":"r","due_at":"2026-07-01T00:00:00Z"}`,
		`{"key":"api.calls","display_name":"API","aggregation":"count","event_value_key":"n","unit_label":"u","description":"d"}`,
		`{"amount":1e3}`, `{"key":"a b"}`, `{`, `[]`,
	} {
		f.Add([]byte(s))
	}
	ok := func(t *testing.T, err error) {
		if err == nil {
			return
		}
		if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
			t.Fatalf("unexpected error %v", err)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if o, err := fields.Decode(body); err != nil {
			ok(t, err)
		} else if in, err := invoices.Decode(o); err != nil {
			ok(t, err)
		} else {
			ok(t, in.Validate())
		}
		if o, err := fields.Decode(body); err == nil {
			if in, err := metering.Decode(o); err != nil {
				ok(t, err)
			} else {
				ok(t, in.Validate())
			}
		}
	})
}

package daemon

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// FuzzPayForm decodes arbitrary pay forms, form-encoded and JSON, with an
// arbitrary query: never a panic, every rejection is a 400 code, and what is
// accepted is text the database can store (the form decoder is the only
// check of a form field).
func FuzzPayForm(f *testing.F) {
	for _, s := range []struct{ ct, body, query string }{
		{"application/x-www-form-urlencoded", "payer=0x4242424242424242424242424242424242424242&external_customer_id=u_42", ""},
		{"application/x-www-form-urlencoded", "payer=0x42&wallet=x", "external_customer_id=u%00"},
		{"application/x-www-form-urlencoded", "payer=%ff%fe", ""},
		{"application/json", `{"payer":"0x42","external_customer_id":"\u0000"}`, ""},
		{"", "%zz", "x=%"},
	} {
		f.Add(s.ct, s.body, s.query)
	}
	f.Fuzz(func(t *testing.T, ct, body, query string) {
		r := httptest.NewRequest("POST", "/checkout/inv_x/pay", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", ct)
		in, err := (&Server{}).decodePayForm(httptest.NewRecorder(), r)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, v := range []string{in.Payer, orEmpty(in.ExternalCustomerID)} {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				t.Fatalf("accepted %q", v)
			}
		}
	})
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

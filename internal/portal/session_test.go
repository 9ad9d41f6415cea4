package portal

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

func TestCheckReturnURL(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		"https://app.example.com/account": true, "http://localhost:3000/x": true, "http://127.0.0.1/": true, "http://[::1]:8080/": true,
		"http://example.com/": false, "https:///nohost": false, "javascript:alert(1)": false, "ftp://example.com/": false,
		"https://user:pw@example.com/": false, "/relative": false, "http://localhost.evil.com/": false, "https://ok.example/\x00": false,
	} {
		err := checkReturnURL(&raw)
		if (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", raw, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "return_url") {
			t.Errorf("%q: %v does not name return_url", raw, err)
		}
	}
}

// FuzzDecode reads arbitrary create requests: never a panic, refusals are
// API errors, and what passes has at most MaxPlans plans and a return URL
// that is https or loopback http.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"customer_id":"cus_1"}`, `{"external_customer_id":"u","plans":["price_1","price_2"],"return_url":"https://a.b/"}`,
		`{"plans":"price_1"}`, `{"plans":[1]}`, `{"return_url":"http://localhost/"}`, `{"return_url":"http://evil/"}`, `[]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err != nil {
			return
		}
		in, err := Decode(o)
		if err == nil {
			err = checkReturnURL(in.ReturnURL)
		}
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("non-API error %T %v", err, err)
			}
			return
		}
		if len(in.Plans) > MaxPlans {
			t.Fatalf("%d plans", len(in.Plans))
		}
		if u := in.ReturnURL; u != nil && !strings.HasPrefix(*u, "https://") && !strings.HasPrefix(*u, "http://") {
			t.Fatalf("return_url %q", *u)
		}
		if u := in.ReturnURL; u != nil && !utf8.ValidString(*u) {
			t.Fatalf("return_url %q", *u)
		}
	})
}

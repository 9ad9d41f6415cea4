package subscriptions

import (
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// FuzzDecodeChange decodes arbitrary bodies as the plan change and plan
// migration requests: never a panic; a rejection is invalid_json or
// invalid_request naming a field; an accepted change has a plan and an at
// of now or period_end.
func FuzzDecodeChange(f *testing.F) {
	for _, s := range []string{
		`{"plan":"price_1","at":"now","preview":true}`, `{"plan":"price_1"}`, `{"plan":"price_1","at":"soon"}`,
		`{"to":"price_2","preview":false}`, `{"plan":"\u0000"}`, `{"plan":1}`, `{`, `[]`, `{"plan":"a","plan":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		in, err := DecodeChange(o)
		switch {
		case err != nil:
			if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(e.Message, ": ") {
				t.Fatalf("unexpected error %v", err)
			}
		case in.Plan == "" || (in.At != AtNow && in.At != AtPeriodEnd):
			t.Fatalf("accepted %+v from %q", in, body)
		}
		if o, err := fields.Decode(body); err == nil {
			if m, err := DecodeMigration(o); err == nil && m.To == "" {
				t.Fatalf("accepted %+v from %q", m, body)
			} else if err != nil && apperr.CodeOf(err) != apperr.InvalidRequest {
				t.Fatalf("unexpected error %v", err)
			}
		}
	})
}

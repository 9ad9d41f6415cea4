package daemon

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// FuzzCreditInput feeds arbitrary bodies and Idempotency-Key headers to the
// credit grant and debit decoders: they never panic, every error is an API
// error with a 400 code, and what they accept satisfies the domain's rules
// or is refused by them with an API error.
func FuzzCreditInput(f *testing.F) {
	for _, seed := range []string{
		`{"amount":1000000,"customer_id":"cus_1"}`,
		`{"amount":"9000000","external_customer_id":"u1","reason":"promo","expires_at":"2031-01-01T00:00:00Z","idempotency_key":"k"}`,
		`{"amount":5,"customer_id":"cus_1","allow_negative":true,"idempotency_key":"k"}`,
		`{"amount":1.5}`, `{"amount":-1}`, `{"amount":"99999999999999999999"}`, `[]`, `{`, `null`, `{"extra":1}`,
		`{"amount":1,"customer_id":"c","reason":null,"expires_at":"2001-02-30T00:00:00Z"}`,
	} {
		f.Add(seed, "")
		f.Add(seed, "k")
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body, header string) {
		check := func(err error) {
			if err == nil {
				return
			}
			e, ok := apperr.As(err)
			if !ok {
				t.Fatalf("not an API error: %T %v", err, err)
			}
			switch e.Code {
			case apperr.InvalidJSON, apperr.InvalidRequest, apperr.CustomerRequired:
			default:
				t.Fatalf("unexpected code %s: %s", e.Code, e.Message)
			}
		}
		for _, debit := range []bool{false, true} {
			o, err := fields.Decode([]byte(body))
			if err != nil {
				check(err)
				continue
			}
			if debit {
				in, err := credits.DecodeDebit(o)
				if err == nil {
					in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, header)
				}
				check(err)
				if err == nil {
					verr := in.Validate()
					check(verr)
					if verr == nil && (in.Amount <= 0 || (in.IdempotencyKey != nil && utf8.RuneCountInString(*in.IdempotencyKey) > 255)) {
						t.Fatalf("accepted %+v", in)
					}
				}
				continue
			}
			in, err := credits.DecodeGrant(o)
			if err == nil {
				in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, header)
			}
			check(err)
			if err == nil {
				verr := in.Validate(now)
				check(verr)
				if verr == nil && (in.Amount <= 0 || (in.ExpiresAt != nil && !in.ExpiresAt.After(now))) {
					t.Fatalf("accepted %+v", in)
				}
			}
		}
	})
}

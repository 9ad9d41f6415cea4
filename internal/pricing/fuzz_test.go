package pricing

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
)

// FuzzDecode feeds arbitrary bytes to Decode: it never panics, fails only
// with invalid_request naming a pricing_model field, and a model it accepts
// is valid, re-encodes to a form that decodes to the same model, and rates
// any quantity without panicking, its lines adding up to the amount.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"kind":"per_unit","unitAmount":5,"includedUnits":1000}`,
		`{"kind":"per_unit","unitAmount":"5"}`,
		`{"kind":"package","unitAmount":500,"packageSize":"100"}`,
		`{"kind":"flat","amount":"9000000"}`,
		`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10000,"unitAmount":10},{"upTo":50000,"unitAmount":8},{"upTo":null,"unitAmount":5}]}`,
		`{"kind":"tiered","mode":"volume","tiers":[{"unitAmount":"7"}]}`,
		`{"kind":"tiered","mode":"volume","tiers":[{"upTo":2,"unitAmount":1},{"upTo":1,"unitAmount":1},{"upTo":null,"unitAmount":1}]}`,
		`{"kind":"flat","amount":1,"amount":2}`, `{"kind":"per_unit","unitAmount":-1}`, `{"kind":"package","unitAmount":1,"packageSize":0}`,
		`{"kind":"per_unit","unitAmount":1e3}`, `{"kind":"tiered","mode":"volume","tiers":[]}`, `[]`, `null`, `{`, `{"kind":"flat","amount":1} x`,
		`{"kind":"per_unit","unitAmount":9223372036854775807,"includedUnits":9007199254740991}`,
	} {
		f.Add([]byte(s), uint64(12345))
	}
	f.Fuzz(func(t *testing.T, raw []byte, quantity uint64) {
		m, err := Decode(raw)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "pricing_model") {
				t.Fatalf("Decode(%q): %v; want invalid_request naming pricing_model", raw, err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Decode(%q) accepted an invalid model: %v", raw, err)
		}
		b, err := json.Marshal(m.Wire())
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(b)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("Decode(%s) = %+v, %v; want %+v", b, again, err, m)
		}
		huge, _ := new(big.Int).SetString("1000000000000000000000000000000", 10)
		for _, q := range []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).SetUint64(quantity), huge} {
			r := m.Rate(q)
			if r.Amount.Sign() < 0 {
				t.Fatalf("%+v at %s: negative amount %s", m, q, r.Amount)
			}
			sum := new(big.Int)
			for _, l := range r.Lines {
				sum.Add(sum, l.Amount)
			}
			if sum.Cmp(r.Amount) != 0 || len(r.Lines) == 0 {
				t.Fatalf("%+v at %s: %d lines add up to %s, amount %s", m, q, len(r.Lines), sum, r.Amount)
			}
			charged, _ := Cap(r, money.Amount(quantity>>1))
			if charged < 0 || big.NewInt(int64(charged)).Cmp(r.Amount) > 0 {
				t.Fatalf("%+v at %s: charged %d of %s", m, q, charged, r.Amount)
			}
		}
	})
}

package coupons

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

func TestCodeProblem(t *testing.T) {
	for code, ok := range map[string]bool{"abc": true, "Launch_2026-x": true, "ab": false, "a b c": false, "abc\x00": false,
		"été": false, "0123456789012345678901234567890123456789": true, "01234567890123456789012345678901234567890": false} {
		if got := CodeProblem(code) == ""; got != ok {
			t.Errorf("%q: ok %v, want %v", code, got, ok)
		}
	}
}

func TestValidAndApplies(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	max := int64(2)
	c := Coupon{Status: Active, RedeemBy: &later, MaxRedemptions: &max, TimesRedeemed: 1, AppliesTo: []string{"price_a"}}
	if !c.Valid(now) || c.Valid(later) || !c.AppliesToPlan("price_a") || c.AppliesToPlan("price_b") {
		t.Fatalf("%+v", c)
	}
	c.TimesRedeemed = 2
	if c.Valid(now) {
		t.Fatal("an exhausted coupon is valid")
	}
	c.TimesRedeemed, c.Status = 0, Archived
	if c.Valid(now) {
		t.Fatal("an archived coupon is valid")
	}
	if w := (Coupon{Status: Active}).Wire(now); w.AppliesTo == nil || !w.Valid {
		t.Fatalf("%+v", w)
	}
}

// FuzzDecode holds the coupon decoder to its contract on any body: API
// errors only, and what it accepts is a coupon the table can store.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"percent_off":20,"duration":"once"}`, `{"amount_off":"5000","duration":"forever","code":"LAUNCH"}`,
		`{"percent_off":10,"duration":"repeating","duration_in_periods":3,"max_redemptions":5,"redeem_by":"2030-01-01T00:00:00Z"}`,
		`{"percent_off":10,"amount_off":1,"duration":"once"}`, `{"duration":"repeating"}`, `{"percent_off":1e2}`, `{}`, `[]`,
		`{"percent_off":10,"duration":"once","applies_to":["price_1","price_1"],"name":"x"}`, `{"amount_off":-1,"duration":"once"}`,
		`{"percent_off":10,"duration":"once","code":"a\u0000b"}`, `{"percent_off":10,"duration":"once","applies_to":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("decode: non-API error %v", err)
			}
			return
		}
		in, err := Decode(o)
		if err == nil {
			err = in.Validate()
		}
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("non-API error %T %v", err, err)
			}
			return
		}
		if (in.PercentOff == nil) == (in.AmountOff == nil) {
			t.Fatalf("both or neither of percent_off and amount_off: %+v", in)
		}
		if in.PercentOff != nil && (*in.PercentOff < 1 || *in.PercentOff > 100) || in.AmountOff != nil && *in.AmountOff < 1 {
			t.Fatalf("out of range: %+v", in)
		}
		if (in.Duration == Repeating) != (in.DurationInPeriods != nil) {
			t.Fatalf("duration %s with periods %v", in.Duration, in.DurationInPeriods)
		}
		if in.Code != nil && CodeProblem(*in.Code) != "" {
			t.Fatalf("code %q", *in.Code)
		}
		for _, p := range in.AppliesTo {
			if !utf8.ValidString(p) || fields.TextProblem(p) != "" {
				t.Fatalf("applies_to %q", p)
			}
		}
	})
}

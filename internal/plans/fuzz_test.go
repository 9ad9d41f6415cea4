package plans_test

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/plans"
)

// FuzzDecode feeds arbitrary bodies to the POST /v1/plans decoder and its
// validation: never a panic, every refusal one of the 400 codes the API
// gives plans, and what passes is a plan the spec allows.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"name":"Pro","amount":9000000,"interval":"month"}`,
		`{"name":"Pro","amount":"1000000","interval":"custom","interval_days":30,"description":"d","features":["api",{"feature_key":"seats","limit_value":5}]}`,
		`{"name":"Usage","amount":5000000,"interval":"week","usage_type":"metered","meter":"meter_1","pricing_model":{"kind":"tiered","mode":"volume","tiers":[{"upTo":10,"unitAmount":5},{"upTo":null,"unitAmount":1}]}}`,
		`{"name":"x","amount":999999,"interval":"year"}`, `{"name":"Pro","amount":1000000,"interval":"week","interval_days":7}`,
		`{"name":"Pro","amount":1000000,"interval":"custom","interval_days":366}`, `{"features":[{}]}`, `[]`, `{`,
		`{"name":"Pro","amount":9000000,"interval":"month","trial_days":14}`, `{"name":"Pro","amount":9000000,"interval":"month","trial_days":731}`,
		`{"name":"Pro","amount":9000000,"interval":"month","trial_days":0}`, `{"name":"Pro","amount":9000000,"interval":"month","trial_days":1.5}`,
		`{"name":"Pro","amount":9000000,"interval":"month","trial_days":"7"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err != nil {
			return
		}
		in, err := plans.Decode(o)
		if err == nil {
			err = in.Validate()
		}
		if err != nil {
			switch apperr.CodeOf(err) {
			case apperr.InvalidRequest, apperr.AmountTooSmall, apperr.InvalidInterval:
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if in.Amount < plans.MinAmount || (in.UsageType == plans.Metered) != (in.Meter != nil && in.PricingModel != nil) ||
			(in.TrialDays != nil && (*in.TrialDays < 1 || *in.TrialDays > 730)) {
			t.Fatalf("accepted %+v", in)
		}
	})
}

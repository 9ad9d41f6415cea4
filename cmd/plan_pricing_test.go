package cmd

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// planParams runs `plan create` with args and returns what it would send, or
// the error (no server: flag parsing only).
func planParams(t *testing.T, args ...string) (client.PlanParams, error) {
	t.Helper()
	var got client.PlanParams
	cmd := newPlanCreateCmd(NewFactory(&IO{}), func(_ context.Context, p client.PlanParams) error {
		got = p
		return nil
	})
	cmd.SetArgs(append([]string{"--name", "Pro", "--amount", "9usdc", "--interval", "month"}, args...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetErr(io.Discard) // warnings (a bare --amount) are not what these test
	return got, cmd.Execute()
}

func TestPlanCreateFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		usage string // want a usage error containing this
		model string // pricing_model sent
		check func(client.PlanParams) bool
	}{
		{name: "licensed", check: func(p client.PlanParams) bool {
			return p.Amount == "9000000" && p.Interval == "month" && p.UsageType == "" && p.PricingModel == nil && p.IntervalDays == nil
		}},
		{name: "custom days", args: []string{"--interval-days", "10"}, check: func(p client.PlanParams) bool {
			return p.IntervalDays != nil && *p.IntervalDays == 10
		}},
		{name: "per unit inferred, metered inferred", args: []string{"--meter", "meter_1", "--unit-amount", "0.001usdc", "--included-units", "100"},
			model: `{"kind":"per_unit","unitAmount":"1000","includedUnits":100}`,
			check: func(p client.PlanParams) bool { return p.UsageType == "metered" && p.Meter == "meter_1" }},
		{name: "package", args: []string{"--pricing", "package", "--unit-amount", "5", "--package-size", "1000"},
			model: `{"kind":"package","unitAmount":"5","packageSize":1000}`},
		{name: "package inferred", args: []string{"--unit-amount", "5", "--package-size", "1000"},
			model: `{"kind":"package","unitAmount":"5","packageSize":1000}`},
		{name: "tiered", args: []string{"--tier-mode", "volume", "--tier", "1000:0.002usdc", "--tier", " 5000 : 1500", "--tier", "inf:0"},
			model: `{"kind":"tiered","mode":"volume","tiers":[{"upTo":1000,"unitAmount":"2000"},{"upTo":5000,"unitAmount":"1500"},{"upTo":null,"unitAmount":"0"}]}`},
		{name: "empty upTo is the last tier", args: []string{"--pricing", "tiered", "--tier-mode", "graduated", "--tier", ":7"},
			model: `{"kind":"tiered","mode":"graduated","tiers":[{"upTo":null,"unitAmount":"7"}]}`},
		{name: "flat", args: []string{"--flat-amount", "2usdc"}, model: `{"kind":"flat","amount":"2000000"}`},
		{name: "fields of another kind are sent for the API to name",
			args:  []string{"--pricing", "per_unit", "--unit-amount", "1", "--package-size", "3"},
			model: `{"kind":"per_unit","unitAmount":"1","packageSize":3}`},
		{name: "negative units are sent for the API to name", args: []string{"--unit-amount", "1", "--included-units", "-5"},
			model: `{"kind":"per_unit","unitAmount":"1","includedUnits":-5}`},
		{name: "whole model", args: []string{"--pricing-model", `{ "kind": "flat", "amount": 5 }`}, model: `{"kind":"flat","amount":5}`},
		{name: "usage type kept", args: []string{"--usage-type", "licensed", "--flat-amount", "1"},
			check: func(p client.PlanParams) bool { return p.UsageType == "licensed" }},
		{name: "features", args: []string{"--feature", "api_access", "--feature", "seats:5", "--feature", "gpu:abc"},
			check: func(p client.PlanParams) bool {
				b, _ := json.Marshal(p.Features)
				return string(b) == `[{"feature_key":"api_access"},{"feature_key":"seats","limit_value":"5"},{"feature_key":"gpu","limit_value":"abc"}]`
			}},
		{name: "model and pieces", args: []string{"--pricing-model", `{"kind":"flat","amount":5}`, "--pricing", "flat"}, usage: "--pricing-model gives the whole"},
		{name: "model not JSON", args: []string{"--pricing-model", `{kind:flat}`}, usage: "not valid JSON"},
		{name: "tier without colon", args: []string{"--tier", "1000"}, usage: `--tier "1000": want upTo:unitAmount`},
		{name: "tier upTo", args: []string{"--tier", "lots:1"}, usage: `upTo "lots"`},
		{name: "tier price", args: []string{"--tier", "10:1.5"}, usage: `unitAmount "1.5"`},
		{name: "negative price", args: []string{"--unit-amount", "-1"}, usage: "--unit-amount"},
		{name: "units not a number", args: []string{"--package-size", "1k"}, usage: "--package-size"},
		{name: "interval days", args: []string{"--interval-days", "ten"}, usage: "--interval-days"},
		{name: "feature key", args: []string{"--feature", ":5"}, usage: "--feature"},
		{name: "feature limit", args: []string{"--feature", "seats:"}, usage: "nothing after the colon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := planParams(t, tt.args...)
			if tt.usage != "" {
				if err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), tt.usage) {
					t.Fatalf("err %v (exit %d), want a usage error containing %q", err, exitCode(err), tt.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.model != "" && string(p.PricingModel) != tt.model {
				t.Errorf("pricing_model %s, want %s", p.PricingModel, tt.model)
			}
			if tt.model != "" && tt.check == nil && p.UsageType != "metered" {
				t.Errorf("usage_type %q, want metered", p.UsageType)
			}
			if tt.check != nil && !tt.check(p) {
				t.Errorf("sent %+v", p)
			}
		})
	}
}

func TestPricingSummary(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"kind":"per_unit","unitAmount":"1000","includedUnits":100}`:                                                "per_unit: 0.001 USDC per unit, first 100 included",
		`{"kind":"per_unit","unitAmount":"1000"}`:                                                                    "per_unit: 0.001 USDC per unit",
		`{"kind":"package","unitAmount":"5000000","packageSize":1000}`:                                               "package: 5.00 USDC per 1000 units",
		`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10,"unitAmount":"2"},{"upTo":null,"unitAmount":"1"}]}`: "tiered (graduated): up to 10 at 0.000002 USDC, above at 0.000001 USDC",
		`{"kind":"flat","amount":"2000000"}`:                                                                         "flat: 2.00 USDC per period",
		`null`:                                                                                                       "",
	} {
		if got := pricingSummary(json.RawMessage(raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

// FuzzParseTier: whatever is typed, parseTier never panics, and a tier it
// accepts reads back the same when written out again.
func FuzzParseTier(f *testing.F) {
	for _, s := range []string{"1000:2000", "inf:0.001usdc", ":7", "10:1.5", "x", "5:", "-1:1", "9999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tier, err := parseTier(s)
		if err != nil {
			return
		}
		again := ":" + tier.UnitAmount
		if tier.UpTo != nil {
			again = strconv.FormatInt(*tier.UpTo, 10) + again
		}
		back, err := parseTier(again)
		if err != nil || back.UnitAmount != tier.UnitAmount || (back.UpTo == nil) != (tier.UpTo == nil) ||
			(back.UpTo != nil && *back.UpTo != *tier.UpTo) {
			t.Fatalf("%q → %+v, rewritten %q → %+v, %v", s, tier, again, back, err)
		}
	})
}

// FuzzParseFeature: an accepted feature has a key without a colon, and a
// limit only when one was typed.
func FuzzParseFeature(f *testing.F) {
	for _, s := range []string{"api_access", "seats:5", ":5", "seats:", "a:b:c", " x : 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		feat, err := parseFeature(s)
		if err != nil {
			return
		}
		if feat.FeatureKey == "" || strings.Contains(feat.FeatureKey, ":") || (feat.LimitValue != nil) != strings.Contains(s, ":") {
			t.Fatalf("%q → %+v", s, feat)
		}
	})
}

// FuzzPricingFlags: any flag values give a usage error or a JSON object
// with a kind.
func FuzzPricingFlags(f *testing.F) {
	f.Add("", "1000", "100", "", "", "")
	f.Add("tiered", "", "", "graduated", "10:1", "")
	f.Add("", "", "", "", "", `{"kind":"flat","amount":1}`)
	f.Fuzz(func(t *testing.T, kind, unit, included, mode, tier, model string) {
		p := pricingFlags{Kind: kind, UnitAmount: unit, IncludedUnits: included, TierMode: mode, Model: model}
		if tier != "" {
			p.Tiers = []string{tier}
		}
		raw, err := p.model()
		if err != nil {
			if exitCode(err) != ExitUsage {
				t.Fatalf("%+v: %v is not a usage error", p, err)
			}
			return
		}
		if raw == nil {
			if p.given() {
				t.Fatalf("%+v gave no model", p)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("%+v → invalid JSON %s", p, raw)
		}
		if model == "" {
			var m map[string]any
			if json.Unmarshal(raw, &m) != nil || m["kind"] == nil {
				t.Fatalf("%+v → %s has no kind", p, raw)
			}
		}
	})
}

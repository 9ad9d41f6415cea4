package pricing

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

func up(n int64) *int64 { return &n }

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Model
		wire string
	}{
		{`{"kind":"per_unit","unitAmount":5,"includedUnits":1000}`,
			Model{Kind: PerUnit, UnitAmount: 5, IncludedUnits: 1000},
			`{"kind":"per_unit","unitAmount":"5","includedUnits":1000}`},
		{`{"kind":"per_unit","unitAmount":"5"}`,
			Model{Kind: PerUnit, UnitAmount: 5},
			`{"kind":"per_unit","unitAmount":"5","includedUnits":0}`},
		{`{"includedUnits":null,"unitAmount":0,"kind":"per_unit"}`,
			Model{Kind: PerUnit},
			`{"kind":"per_unit","unitAmount":"0","includedUnits":0}`},
		{`{"kind":"package","unitAmount":500,"packageSize":"100"}`,
			Model{Kind: Package, UnitAmount: 500, PackageSize: 100},
			`{"kind":"package","unitAmount":"500","packageSize":100}`},
		{`{"kind":"flat","amount":"9000000"}`,
			Model{Kind: Flat, Amount: 9_000_000},
			`{"kind":"flat","amount":"9000000"}`},
		{`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10000,"unitAmount":10},{"upTo":50000,"unitAmount":8},{"upTo":null,"unitAmount":5}]}`,
			Model{Kind: Tiered, Mode: Graduated, Tiers: []Tier{{up(10000), 10}, {up(50000), 8}, {nil, 5}}},
			`{"kind":"tiered","mode":"graduated","tiers":[{"upTo":10000,"unitAmount":"10"},{"upTo":50000,"unitAmount":"8"},{"upTo":null,"unitAmount":"5"}]}`},
		{`{"kind":"tiered","mode":"volume","tiers":[{"unitAmount":"7"}]}`,
			Model{Kind: Tiered, Mode: Volume, Tiers: []Tier{{nil, 7}}},
			`{"kind":"tiered","mode":"volume","tiers":[{"upTo":null,"unitAmount":"7"}]}`},
		{`{"kind":"per_unit","unitAmount":9223372036854775807,"includedUnits":9007199254740991}`,
			Model{Kind: PerUnit, UnitAmount: 9223372036854775807, IncludedUnits: MaxUnits},
			`{"kind":"per_unit","unitAmount":"9223372036854775807","includedUnits":9007199254740991}`},
	}
	for _, tt := range tests {
		got, err := Decode(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("Decode(%s): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%s) = %+v; want %+v", tt.in, got, tt.want)
		}
		b, err := json.Marshal(got.Wire())
		if err != nil || string(b) != tt.wire {
			t.Errorf("Wire of %s = %s, %v; want %s", tt.in, b, err, tt.wire)
		}
		again, err := Decode(b)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Decode(Wire) = %+v, %v; want %+v", again, err, got)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tiers := func(s string) string { return `{"kind":"tiered","mode":"graduated","tiers":` + s + `}` }
	many := make([]string, MaxTiers+1)
	for i := range many {
		many[i] = `{"upTo":` + itoa(i+1) + `,"unitAmount":1}`
	}
	many[MaxTiers] = `{"upTo":null,"unitAmount":1}`
	tests := []struct {
		in    string
		field string // the message starts with field + ": "
	}{
		{`null`, "pricing_model"},
		{`[]`, "pricing_model"},
		{`"per_unit"`, "pricing_model"},
		{`{"kind":"flat","amount":1}{}`, "pricing_model"},
		{`{"kind":"flat","amount":1`, "pricing_model"},
		{`{}`, "pricing_model.kind"},
		{`{"kind":null,"amount":1}`, "pricing_model.kind"},
		{`{"kind":1}`, "pricing_model.kind"},
		{`{"kind":"stairstep"}`, "pricing_model.kind"},
		{`{"kind":"Flat","amount":1}`, "pricing_model.kind"},
		{`{"kind":"flat","kind":"flat","amount":1}`, "pricing_model.kind"},
		{`{"kind":"flat","amount":1,"amount":2}`, "pricing_model.amount"},
		{`{"kind":"flat","amount":1,"Amount":2}`, "pricing_model.Amount"},
		{`{"kind":"per_unit","unit_amount":5}`, "pricing_model.unit_amount"},
		{`{"kind":"per_unit","unitAmount":5,"packageSize":10}`, "pricing_model.packageSize"},
		{`{"kind":"flat","amount":1,"tiers":null}`, "pricing_model.tiers"},
		{`{"kind":"per_unit"}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":null}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":-1}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":1.5}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":1e3}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":"+1"}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":true}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":9223372036854775808}`, "pricing_model.unitAmount"},
		{`{"kind":"per_unit","unitAmount":1,"includedUnits":-1}`, "pricing_model.includedUnits"},
		{`{"kind":"per_unit","unitAmount":1,"includedUnits":9007199254740992}`, "pricing_model.includedUnits"},
		{`{"kind":"per_unit","unitAmount":1,"includedUnits":"x"}`, "pricing_model.includedUnits"},
		{`{"kind":"package","unitAmount":1}`, "pricing_model.packageSize"},
		{`{"kind":"package","unitAmount":1,"packageSize":0}`, "pricing_model.packageSize"},
		{`{"kind":"package","packageSize":1}`, "pricing_model.unitAmount"},
		{`{"kind":"flat"}`, "pricing_model.amount"},
		{`{"kind":"flat","amount":{}}`, "pricing_model.amount"},
		{`{"kind":"tiered","tiers":[{"upTo":null,"unitAmount":1}]}`, "pricing_model.mode"},
		{`{"kind":"tiered","mode":"stepped","tiers":[{"upTo":null,"unitAmount":1}]}`, "pricing_model.mode"},
		{`{"kind":"tiered","mode":1,"tiers":[{"upTo":null,"unitAmount":1}]}`, "pricing_model.mode"},
		{`{"kind":"tiered","mode":"volume"}`, "pricing_model.tiers"},
		{tiers(`[]`), "pricing_model.tiers"},
		{tiers(`{}`), "pricing_model.tiers"},
		{tiers(`[` + strings.Join(many, ",") + `]`), "pricing_model.tiers"},
		{tiers(`[1]`), "pricing_model.tiers[0]"},
		{tiers(`[{"upTo":10,"unitAmount":1},{"upTo":10,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[1].upTo"},
		{tiers(`[{"upTo":10,"unitAmount":1},{"upTo":20,"unitAmount":1},{"upTo":15,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[2].upTo"},
		{tiers(`[{"upTo":0,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
		{tiers(`[{"upTo":1.5,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
		{tiers(`[{"upTo":10,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
		{tiers(`[{"upTo":10,"unitAmount":1},{"upTo":20,"unitAmount":1}]`), "pricing_model.tiers[1].upTo"},
		{tiers(`[{"upTo":null,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
		{tiers(`[{"unitAmount":1},{"upTo":10,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
		{tiers(`[{"upTo":10},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].unitAmount"},
		{tiers(`[{"upTo":10,"unitAmount":-3},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].unitAmount"},
		{tiers(`[{"upTo":10,"unitAmount":1},{"upTo":null,"unitAmount":1,"flat":2}]`), "pricing_model.tiers[1].flat"},
		{tiers(`[{"upTo":10,"up_to":10,"unitAmount":1},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].up_to"},
		{tiers(`[{"upTo":10,"unitAmount":1,"upTo":11},{"upTo":null,"unitAmount":1}]`), "pricing_model.tiers[0].upTo"},
	}
	for _, tt := range tests {
		_, err := Decode(json.RawMessage(tt.in))
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, tt.field+": ") {
			t.Errorf("Decode(%.120s) = %v; want invalid_request naming %s", tt.in, err, tt.field)
		}
	}
}

func TestValidateRejectsFieldsOfAnotherKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m     Model
		field string
	}{
		{Model{Kind: Flat, Amount: 1, UnitAmount: 2}, "pricing_model.unitAmount"},
		{Model{Kind: PerUnit, UnitAmount: 1, Tiers: []Tier{}}, "pricing_model.tiers"},
		{Model{Kind: Package, UnitAmount: 1, PackageSize: 1, IncludedUnits: 3}, "pricing_model.includedUnits"},
		{Model{Kind: Tiered, Mode: Volume, Tiers: []Tier{{nil, 1}}, Amount: 1}, "pricing_model.amount"},
		{Model{Kind: "", Amount: 1}, "pricing_model.kind"},
		{Model{Kind: Package, UnitAmount: 1}, "pricing_model.packageSize"},
		{Model{Kind: Flat, Amount: -1}, "pricing_model.amount"},
	}
	for _, tt := range tests {
		err := tt.m.Validate()
		if e, ok := apperr.As(err); !ok || !strings.HasPrefix(e.Message, tt.field+": ") {
			t.Errorf("Validate(%+v) = %v; want an error naming %s", tt.m, err, tt.field)
		}
	}
}

func TestModelJSONAndScan(t *testing.T) {
	t.Parallel()
	m := Model{Kind: Tiered, Mode: Volume, Tiers: []Tier{{up(5), 3}, {nil, 2}}}
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := back.Scan(v); err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("Scan(Value()) = %+v, %v; want %+v", back, err, m)
	}
	if err := back.Scan(string(v.([]byte))); err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("Scan(string) = %+v, %v", back, err)
	}
	if err := back.Scan(int64(3)); err == nil {
		t.Fatal("Scan(int64) succeeded")
	}
	var holder struct {
		P *Model `json:"pricing_model"`
	}
	if err := json.Unmarshal([]byte(`{"pricing_model":{"kind":"flat","amount":"7"}}`), &holder); err != nil || holder.P == nil || holder.P.Amount != 7 {
		t.Fatalf("Unmarshal = %+v, %v", holder.P, err)
	}
	var value struct{ P Model }
	if err := json.Unmarshal([]byte(`{"P":null}`), &value); err != nil || value.P.Kind != "" {
		t.Fatalf("Unmarshal of null = %+v, %v; want the zero model", value.P, err)
	}
	if err := json.Unmarshal([]byte(`{"pricing_model":{"kind":"flat"}}`), &holder); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("Unmarshal of an invalid model = %v; want invalid_request", err)
	}
}

package chainrail_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chainrail"
)

const goodActivation = `{"plan":{"payer":"0x5B38Da6a701c568545dCfcB03FcB875f56beddC4","payee":"0xab8483f64d9c6d1ecf9b849ae677dd3315835cb2",
"token":"0x4b20993bc481177ec7e8f571cecae8a9e22c02db","capPerPeriod":"5000000","period":86400,"start":"1767225600",
"end":"18446744073709551615","salt":"0x0101010101010101010101010101010101010101010101010101010101010101"},
"signature":"0x` + "ab" + `","permit":{"value":"1","deadline":"2","signature":"0x01"},"external_customer_id":"u_42"}`

func TestParseActivation(t *testing.T) {
	t.Parallel()
	a, ext, err := chainrail.ParseActivation([]byte(goodActivation))
	if err != nil || ext == nil || *ext != "u_42" || a.Plan.Period.Uint64() != 86400 || a.Plan.End.String() != "18446744073709551615" ||
		a.Permit.Deadline.Uint64() != 2 || len(a.Signature) != 1 {
		t.Fatalf("%+v %v %v", a, ext, err)
	}
	for body, want := range map[string]string{
		`[]`:         "request body must be a JSON object",
		`{}`:         "plan: is required",
		`{"plan":1}`: "plan: must be an object",
		strings.Replace(goodActivation, `"period":86400`, `"period":-1`, 1):              "plan.period: must be a non-negative integer",
		strings.Replace(goodActivation, `"salt":"0x01`, `"salt":"0x1`, 1):                "plan.salt: must be 0x-prefixed hex of 32 bytes",
		strings.Replace(goodActivation, `"payer":"0x5B38Da6a`, `"payer":"0x5b38DA6a`, 1): "plan.payer: has a bad EIP-55 checksum",
		strings.Replace(goodActivation, `"deadline":"2"`, `"deadline":"2","x":1`, 1):     "permit.x: unknown field",
		strings.Replace(goodActivation, `"external_customer_id"`, `"extra"`, 1):          "extra: unknown field",
	} {
		_, _, err := chainrail.ParseActivation([]byte(body))
		if e, ok := apperr.As(err); !ok || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// FuzzParseActivation: no input panics; refusals are invalid_json or
// invalid_request; what is accepted carries every plan field.
func FuzzParseActivation(f *testing.F) {
	f.Add([]byte(goodActivation))
	f.Add([]byte(`{"plan":{}}`))
	f.Add([]byte(`{"plan":{"payer":1},"signature":"0x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, _, err := chainrail.ParseActivation(body)
		if err != nil {
			if e, ok := apperr.As(err); !ok || (e.Code != apperr.InvalidRequest && e.Code != apperr.InvalidJSON) {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		if !json.Valid(body) || a.Plan.CapPerPeriod == nil || a.Plan.Period == nil || a.Plan.Start == nil || a.Plan.End == nil || len(a.Signature) == 0 {
			t.Fatalf("accepted %q as %+v", body, a)
		}
	})
}

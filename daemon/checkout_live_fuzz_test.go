package daemon

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// FuzzParseRevocation reads arbitrary bodies of POST /checkout/{id}/revoke:
// never a panic; a refusal is invalid_json or invalid_request; what is
// accepted has a deadline and a signature.
func FuzzParseRevocation(f *testing.F) {
	for _, s := range []string{
		`{"deadline":"1767225600","signature":"0x` + repeat("11", 65) + `"}`,
		`{"payer":"0xa0Ee7A142d267C1f36714E4a8F75612F20a79720","deadline":1767225600,"signature":"0x00"}`,
		`{"deadline":"115792089237316195423570985008687907853269984665640564039457584007913129639936","signature":"0x"}`,
		`{"deadline":"-1","signature":"0x` + repeat("11", 65) + `","x":1}`,
		`{"payer":"\u0000","deadline":"1"}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		_, deadline, sig, err := parseRevocation([]byte(body))
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if deadline == nil || deadline.Sign() < 0 || deadline.BitLen() > 256 || len(sig) == 0 {
			t.Fatalf("accepted %q: deadline %v, %d signature bytes", body, deadline, len(sig))
		}
	})
}

// FuzzParsePermitRenewal reads arbitrary bodies of a subscription's
// POST /checkout/{sub_…}/authorization, as FuzzParseRevocation does.
func FuzzParsePermitRenewal(f *testing.F) {
	for _, s := range []string{
		`{"value":"60000000","deadline":"1767225600","signature":"0x` + repeat("11", 65) + `"}`,
		`{"value":60000000,"deadline":1767225600,"signature":"0x00"}`,
		`{"value":"1e9","deadline":"1","signature":"0x"}`,
		`{"value":"1","deadline":"1","signature":"0x` + repeat("11", 65) + `","extra":true}`, `null`, `{"value":{}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		in, err := parsePermitRenewal([]byte(body))
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidJSON && c != apperr.InvalidRequest {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if in.Value == nil || in.Deadline == nil || in.Value.BitLen() > 256 || in.Deadline.BitLen() > 256 || len(in.Signature) == 0 {
			t.Fatalf("accepted %q: %+v", body, in)
		}
	})
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

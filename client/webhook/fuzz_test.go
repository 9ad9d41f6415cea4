package webhook_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
)

// FuzzVerify checks that VerifyAt never panics on arbitrary input, that every
// failure is one of the documented errors, and that Sign→VerifyAt round trips
// (and fails for any other payload).
func FuzzVerify(f *testing.F) {
	ts := strconv.FormatInt(signed.Unix(), 10)
	f.Add(body, webhook.Sign(body, signed, secret), secret, signed.Unix(), int64(0))
	f.Add([]byte{}, "t="+ts+",v1="+strings.Repeat("0", 64), "whsec_x", int64(0), int64(-1))
	f.Add([]byte("x"), " t = 1 ,, v1=zz,v0=", "", int64(-1), int64(300))
	f.Add([]byte("\x00\xff"), "t=-9223372036854775808,v1=", "whsec_\x00", int64(253402300799), int64(1))
	f.Fuzz(func(t *testing.T, payload []byte, header, key string, unix, tolSec int64) {
		at := time.Unix(unix, 0)
		tol := time.Duration(tolSec) * time.Second
		err := webhook.VerifyAt(payload, header, key, tol, at)
		if err != nil && !isDocumented(err) {
			t.Fatalf("VerifyAt(%q, %q, %q): undocumented error %v", payload, header, key, err)
		}
		if key == "" {
			if !errors.Is(err, webhook.ErrNoSecret) {
				t.Fatalf("empty secret accepted: %v", err)
			}
			return
		}
		if unix < 0 || unix > 253402300799 {
			return // Sign's output is only verifiable for years 1970 to 9999
		}
		signedHeader := webhook.Sign(payload, at, key, "whsec_other")
		if err := webhook.VerifyAt(payload, signedHeader, key, 0, at); err != nil {
			t.Fatalf("round trip failed: Sign=%q: %v", signedHeader, err)
		}
		if err := webhook.VerifyAt(payload, signedHeader, "whsec_other", -1, at.Add(time.Hour)); err != nil {
			t.Fatalf("round trip, second secret, no tolerance: %v", err)
		}
		altered := append(bytes.Clone(payload), '!')
		if err := webhook.VerifyAt(altered, signedHeader, key, 0, at); !errors.Is(err, webhook.ErrMismatch) {
			t.Fatalf("altered payload: %v, want ErrMismatch", err)
		}
	})
}

func isDocumented(err error) bool {
	for _, target := range []error{webhook.ErrNoSignature, webhook.ErrMalformedHeader,
		webhook.ErrMismatch, webhook.ErrNoSecret, webhook.ErrOutsideTolerance} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// FuzzParseHeader checks that ParseHeader never panics, returns only the
// documented errors, and that a parsed header rebuilt in canonical form
// parses to the same values.
func FuzzParseHeader(f *testing.F) {
	v1 := strings.Repeat("ab", 32)
	for _, s := range []string{
		"", " ", ",", "=", "t=1", "v1=" + v1, "t=1,v1=" + v1, " t=1 , v1=" + v1 + " ,v0=x",
		"t=1,t=2,v1=" + v1, "t=x,v1=" + v1, "t=1,v1=" + v1[:63], "t=1,v1=" + strings.ToUpper(v1) + ",v1=" + v1,
		"t=+5,v1=" + v1, "t=-5,v1=" + v1, "t=1;v1=" + v1, "t==1,v1=" + v1, "\x00t=1,v1=" + v1,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := webhook.ParseHeader(s)
		if err != nil {
			if h != nil {
				t.Fatal("non-nil Header with error")
			}
			if !errors.Is(err, webhook.ErrNoSignature) && !errors.Is(err, webhook.ErrMalformedHeader) {
				t.Fatalf("ParseHeader(%q): undocumented error %v", s, err)
			}
			return
		}
		if len(h.Signatures) == 0 {
			t.Fatalf("ParseHeader(%q): success without signatures", s)
		}
		parts := []string{"t=" + strconv.FormatInt(h.Timestamp.Unix(), 10)}
		for _, sig := range h.Signatures {
			if len(sig) != 32 {
				t.Fatalf("ParseHeader(%q): signature of %d bytes", s, len(sig))
			}
			parts = append(parts, "v1="+hex.EncodeToString(sig))
		}
		canon := strings.Join(parts, ",")
		h2, err := webhook.ParseHeader(canon)
		if err != nil {
			t.Fatalf("canonical %q of %q: %v", canon, s, err)
		}
		if !h2.Timestamp.Equal(h.Timestamp) || len(h2.Signatures) != len(h.Signatures) {
			t.Fatalf("canonical %q of %q parses differently", canon, s)
		}
		for i := range h.Signatures {
			if !bytes.Equal(h.Signatures[i], h2.Signatures[i]) {
				t.Fatalf("canonical %q of %q: signature %d differs", canon, s, i)
			}
		}
	})
}

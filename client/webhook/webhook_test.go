package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
)

const (
	secret    = "whsec_test_5f2b7c1e9a4d"
	newSecret = "whsec_test_rotated_0c8e"
)

var (
	body   = []byte(`{"id":"evt_123","type":"invoice.paid","created_at":"2026-07-01T12:00:00Z","data":{}}`)
	signed = time.Unix(1782907200, 0) // 2026-07-01T12:00:00Z
)

// mac is an independent computation of the expected v1 value.
func mac(t *testing.T, ts, payload, key string) string {
	t.Helper()
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + "." + payload))
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignFormat(t *testing.T) {
	ts := strconv.FormatInt(signed.Unix(), 10)
	want := "t=" + ts + ",v1=" + mac(t, ts, string(body), secret)
	if got := webhook.Sign(body, signed.Add(999*time.Millisecond), secret); got != want {
		t.Fatalf("Sign = %q\nwant  %q", got, want)
	}
	want2 := want + ",v1=" + mac(t, ts, string(body), newSecret)
	if got := webhook.Sign(body, signed, secret, newSecret); got != want2 {
		t.Fatalf("Sign with two secrets = %q\nwant %q", got, want2)
	}
	if got := webhook.Sign(body, signed); got != "t="+ts {
		t.Fatalf("Sign with no secrets = %q", got)
	}
}

func TestVerifyAtTable(t *testing.T) {
	ts := strconv.FormatInt(signed.Unix(), 10)
	good := mac(t, ts, string(body), secret)
	other := mac(t, ts, string(body), "whsec_other")
	tests := []struct {
		name      string
		header    string
		payload   []byte
		secret    string
		tolerance time.Duration
		now       time.Time
		want      error // nil, a sentinel, or ErrOutsideTolerance
	}{
		{name: "valid", header: "t=" + ts + ",v1=" + good},
		{name: "valid uppercase hex", header: "t=" + ts + ",v1=" + strings.ToUpper(good)},
		{name: "spaces around commas", header: " t=" + ts + " ,  v1=" + good + " "},
		{name: "v1 before t", header: "v1=" + good + ",t=" + ts},
		{name: "unknown schemes ignored", header: "t=" + ts + ",v0=abc,v2=" + other + ",v1=" + good + ",x=y=z"},
		{name: "second v1 matches", header: "t=" + ts + ",v1=" + other + ",v1=" + good},
		{name: "empty header", header: "", want: webhook.ErrNoSignature},
		{name: "blank header", header: "   ", want: webhook.ErrNoSignature},
		{name: "no v1", header: "t=" + ts, want: webhook.ErrNoSignature},
		{name: "only v0", header: "t=" + ts + ",v0=" + good, want: webhook.ErrNoSignature},
		{name: "no t", header: "v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t not integer", header: "t=12.5,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t empty", header: "t=,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t negative", header: "t=-" + ts + ",v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t with plus sign", header: "t=+" + ts + ",v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t after year 9999", header: "t=253402300800,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t overflows", header: "t=99999999999999999999,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "t twice", header: "t=" + ts + ",t=" + ts + ",v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "element without =", header: "t=" + ts + ",v1" + good, want: webhook.ErrMalformedHeader},
		{name: "empty element", header: "t=" + ts + ",,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "empty key", header: "t=" + ts + ",=x,v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "v1 not hex", header: "t=" + ts + ",v1=" + strings.Repeat("zz", 32), want: webhook.ErrMalformedHeader},
		{name: "v1 too short", header: "t=" + ts + ",v1=" + good[:62], want: webhook.ErrMalformedHeader},
		{name: "semicolons", header: "t=" + ts + ";v1=" + good, want: webhook.ErrMalformedHeader},
		{name: "wrong secret", header: "t=" + ts + ",v1=" + other, want: webhook.ErrMismatch},
		{name: "secret without prefix", header: "t=" + ts + ",v1=" + good, secret: strings.TrimPrefix(secret, "whsec_"), want: webhook.ErrMismatch},
		{name: "altered body", header: "t=" + ts + ",v1=" + good, payload: append([]byte(" "), body...), want: webhook.ErrMismatch},
		{name: "altered t", header: "t=" + strconv.FormatInt(signed.Unix()+1, 10) + ",v1=" + good, want: webhook.ErrMismatch},
		{name: "t with leading zero is signed text", header: "t=0" + ts + ",v1=" + good, want: webhook.ErrMismatch},
		{name: "empty secret", header: "t=" + ts + ",v1=" + mac(t, ts, string(body), ""), secret: "-", want: webhook.ErrNoSecret},
		{name: "exactly tolerance old", header: "t=" + ts + ",v1=" + good, now: signed.Add(5 * time.Minute)},
		{name: "exactly tolerance ahead", header: "t=" + ts + ",v1=" + good, now: signed.Add(-5 * time.Minute)},
		{name: "too old", header: "t=" + ts + ",v1=" + good, now: signed.Add(5*time.Minute + time.Second), want: webhook.ErrOutsideTolerance},
		{name: "too far ahead", header: "t=" + ts + ",v1=" + good, now: signed.Add(-5*time.Minute - time.Second), want: webhook.ErrOutsideTolerance},
		{name: "custom tolerance", header: "t=" + ts + ",v1=" + good, tolerance: time.Second, now: signed.Add(2 * time.Second), want: webhook.ErrOutsideTolerance},
		{name: "negative tolerance skips check", header: "t=" + ts + ",v1=" + good, tolerance: -1, now: signed.Add(1000 * time.Hour)},
		{name: "mismatch beats stale", header: "t=" + ts + ",v1=" + other, now: signed.Add(time.Hour), want: webhook.ErrMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			payload, key, now := tc.payload, tc.secret, tc.now
			if payload == nil {
				payload = body
			}
			switch key {
			case "":
				key = secret
			case "-":
				key = ""
			}
			if now.IsZero() {
				now = signed.Add(30 * time.Second)
			}
			err := webhook.VerifyAt(payload, tc.header, key, tc.tolerance, now)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("VerifyAt: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("VerifyAt: %v, want errors.Is %v", err, tc.want)
			}
		})
	}
}

func TestTimestampError(t *testing.T) {
	h := webhook.Sign(body, signed, secret)
	now := signed.Add(7*time.Minute + 3*time.Second)
	err := webhook.VerifyAt(body, h, secret, webhook.DefaultTolerance, now)
	var te *webhook.TimestampError
	if !errors.As(err, &te) {
		t.Fatalf("VerifyAt: %v, want *TimestampError", err)
	}
	if !te.Timestamp.Equal(signed) || !te.Now.Equal(now) || te.Skew != 7*time.Minute+3*time.Second || te.Tolerance != 5*time.Minute {
		t.Fatalf("TimestampError = %+v", te)
	}
	if want := "timestamp outside tolerance: 7m3s too old (tolerance 5m0s)"; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Error() = %q, want suffix %q", err, want)
	}
	err = webhook.VerifyAt(body, h, secret, 0, signed.Add(-6*time.Minute))
	if !errors.As(err, &te) || te.Skew != -6*time.Minute {
		t.Fatalf("future: %v", err)
	}
	if want := "6m0s in the future (tolerance 5m0s)"; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Error() = %q, want suffix %q", err, want)
	}
	// Extreme timestamps and clocks saturate instead of overflowing.
	far := "t=253402300799,v1=" + mac(t, "253402300799", string(body), secret)
	if err := webhook.VerifyAt(body, far, secret, 0, signed); !errors.As(err, &te) || te.Skew >= 0 || !strings.Contains(err.Error(), "in the future") {
		t.Fatalf("year 9999: %v", err)
	}
	if err := webhook.VerifyAt(body, far, secret, 0, time.Date(-300000000, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.As(err, &te) || strings.Contains(err.Error(), "-") {
		t.Fatalf("clock in the distant past: %v", err)
	}
}

func TestRotation(t *testing.T) {
	now := signed.Add(time.Minute)
	// During rotation the service signs with both secrets.
	h := webhook.Sign(body, signed, secret, newSecret)
	for _, s := range []string{secret, newSecret} {
		if err := webhook.VerifyAt(body, h, s, 0, now); err != nil {
			t.Errorf("rotation header, secret %q: %v", s, err)
		}
	}
	if err := webhook.VerifyAt(body, h, "whsec_unrelated", 0, now); !errors.Is(err, webhook.ErrMismatch) {
		t.Errorf("rotation header, unrelated secret: %v, want ErrMismatch", err)
	}
	// Before and after rotation only one secret signs.
	if err := webhook.VerifyAt(body, webhook.Sign(body, signed, secret), newSecret, 0, now); !errors.Is(err, webhook.ErrMismatch) {
		t.Errorf("old-only header, new secret: %v, want ErrMismatch", err)
	}
	if err := webhook.VerifyAt(body, webhook.Sign(body, signed, newSecret), newSecret, 0, now); err != nil {
		t.Errorf("new-only header, new secret: %v", err)
	}
}

func TestVerifyUsesCurrentTime(t *testing.T) {
	if err := webhook.Verify(body, webhook.Sign(body, time.Now(), secret), secret, webhook.DefaultTolerance); err != nil {
		t.Fatalf("Verify fresh: %v", err)
	}
	err := webhook.Verify(body, webhook.Sign(body, time.Now().Add(-time.Hour), secret), secret, webhook.DefaultTolerance)
	if !errors.Is(err, webhook.ErrOutsideTolerance) {
		t.Fatalf("Verify hour-old: %v, want ErrOutsideTolerance", err)
	}
}

func TestParseHeader(t *testing.T) {
	ts := strconv.FormatInt(signed.Unix(), 10)
	a, b := mac(t, ts, "x", "a"), mac(t, ts, "x", "b")
	h, err := webhook.ParseHeader("t=" + ts + ", v0=zz , v1=" + a + ",v1=" + b)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Timestamp.Equal(signed) || len(h.Signatures) != 2 ||
		hex.EncodeToString(h.Signatures[0]) != a || hex.EncodeToString(h.Signatures[1]) != b {
		t.Fatalf("ParseHeader = %+v", h)
	}
}

// TestOpenSSLCrossCheck checks Sign against an independent HMAC
// implementation: openssl dgst -sha256 -hmac <secret> over "<t>.<body>".
func TestOpenSSLCrossCheck(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not on PATH")
	}
	cases := []struct {
		secret  string
		payload []byte
		at      time.Time
	}{
		{secret, body, signed},
		{newSecret, []byte{}, time.Unix(0, 0)},
		{"whsec_ spaces & $ymbols", []byte("line1\nline2\r\n\x00binary\xff"), time.Unix(1_000_000_000, 0)},
		{"whsec_" + strings.Repeat("k", 100), bytes.Repeat([]byte("é"), 5000), time.Unix(4102444800, 0)},
	}
	for i, c := range cases {
		ts := strconv.FormatInt(c.at.Unix(), 10)
		cmd := exec.Command(openssl, "dgst", "-sha256", "-hmac", c.secret)
		cmd.Stdin = bytes.NewReader(append([]byte(ts+"."), c.payload...))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("case %d: openssl: %v", i, err)
		}
		// Output is "SHA2-256(stdin)= <hex>" (older versions: "(stdin)= <hex>").
		_, digest, ok := strings.Cut(strings.TrimSpace(string(out)), "= ")
		if !ok || len(digest) != 64 {
			t.Fatalf("case %d: unexpected openssl output %q", i, out)
		}
		want := "t=" + ts + ",v1=" + digest
		if got := webhook.Sign(c.payload, c.at, c.secret); got != want {
			t.Errorf("case %d: Sign = %q, openssl gives %q", i, got, want)
		}
		if err := webhook.VerifyAt(c.payload, want, c.secret, 0, c.at); err != nil {
			t.Errorf("case %d: VerifyAt(openssl header): %v", i, err)
		}
	}
}

func BenchmarkVerify1KiB(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 1024)
	h := webhook.Sign(payload, signed, secret, newSecret)
	for b.Loop() {
		if err := webhook.VerifyAt(payload, h, newSecret, 0, signed); err != nil {
			b.Fatal(err)
		}
	}
}

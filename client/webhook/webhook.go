// Package webhook signs and verifies tollgate webhook deliveries.
//
// Every delivery is an HTTP POST whose x-wc-signature header looks like
//
//	x-wc-signature: t=1782907200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// where t is the Unix time of signing in seconds and v1 is the hex
// HMAC-SHA256 of "<t>.<raw request body>", keyed with the endpoint's signing
// secret exactly as shown when the endpoint was registered, "whsec_" prefix
// included. While a secret is being rotated a header may carry several v1
// entries; a delivery is authentic if any one of them matches.
//
// To verify a delivery, read the raw body (before any JSON decoding, which
// would lose the exact bytes that were signed) and call Verify:
//
//	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
//	if err != nil { ... }
//	err = webhook.Verify(body, r.Header.Get(webhook.HeaderName), secret, webhook.DefaultTolerance)
//	if err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
//	// Only now decode body as JSON. Key on the event id: deliveries may
//	// arrive more than once.
//
// Verify rejects a header whose t is more than the tolerance (5 minutes by
// default) away from the local clock, which limits replays of captured
// deliveries; keep the clock synchronised. The errors it returns can be told
// apart with errors.Is and errors.As: ErrNoSignature, ErrMalformedHeader,
// ErrMismatch, and *TimestampError (which also matches ErrOutsideTolerance).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// HeaderName is the HTTP header carrying the signature.
const HeaderName = "x-wc-signature"

// DefaultTolerance is how far the signed timestamp may be from the current
// time, in either direction, before a delivery is rejected.
const DefaultTolerance = 5 * time.Minute

// maxUnix is the largest accepted t: 9999-12-31T23:59:59Z.
const maxUnix = 253402300799

// SchemeV1 is the header key of an HMAC-SHA256 signature.
const SchemeV1 = "v1"

var (
	// ErrNoSignature is returned when the header is empty or holds no v1
	// signature.
	ErrNoSignature = errors.New("webhook: no v1 signature in header")
	// ErrMalformedHeader is returned (possibly wrapped with detail) when the
	// header is not a comma-separated list of key=value pairs, its t is
	// missing, repeated or not a non-negative integer, or a v1 is not 64 hex
	// digits.
	ErrMalformedHeader = errors.New("webhook: malformed signature header")
	// ErrMismatch is returned when no v1 signature matches the payload and
	// secret: the secret is wrong, or the body or header was altered.
	ErrMismatch = errors.New("webhook: signature mismatch")
	// ErrNoSecret is returned when Verify is called with an empty secret,
	// which would otherwise accept signatures anyone can compute. It usually
	// means the secret was not configured.
	ErrNoSecret = errors.New("webhook: empty signing secret")
	// ErrOutsideTolerance matches every *TimestampError under errors.Is.
	ErrOutsideTolerance = errors.New("webhook: timestamp outside tolerance")
)

// TimestampError is returned when an authentic header's timestamp is further
// than the tolerance from the current time.
type TimestampError struct {
	Timestamp time.Time     // the header's t
	Now       time.Time     // the time it was checked against
	Skew      time.Duration // Now minus Timestamp: positive when t is in the past
	Tolerance time.Duration // the tolerance that was exceeded
}

// Error says by how much and in which direction the timestamp is off, e.g.
// "webhook: timestamp outside tolerance: 7m3s too old (tolerance 5m0s)".
func (e *TimestampError) Error() string {
	if e.Skew < 0 {
		ahead := -e.Skew
		if ahead < 0 { // -minDuration overflows
			ahead = time.Duration(math.MaxInt64)
		}
		return fmt.Sprintf("webhook: timestamp outside tolerance: %v in the future (tolerance %v)", ahead, e.Tolerance)
	}
	return fmt.Sprintf("webhook: timestamp outside tolerance: %v too old (tolerance %v)", e.Skew, e.Tolerance)
}

// Is reports whether target is ErrOutsideTolerance.
func (e *TimestampError) Is(target error) bool { return target == ErrOutsideTolerance }

// Header is a parsed signature header.
type Header struct {
	// Timestamp is the signing time, from t.
	Timestamp time.Time
	// Signatures holds the decoded v1 signatures (32 bytes each), in header
	// order. Entries of other schemes are ignored.
	Signatures [][]byte

	rawT string // t exactly as written, which is what was signed
}

// ParseHeader parses a signature header value. Elements are separated by
// commas, optionally surrounded by spaces; each is key=value. Keys other than
// t and v1 are ignored. It returns ErrNoSignature if header is blank or has
// no v1 entry, and an error matching ErrMalformedHeader for bad syntax, a
// missing or repeated t, a t that is not a decimal number of seconds between
// 0 and 253402300799 (year 9999), or a v1 that is not 64 hex digits.
func ParseHeader(header string) (*Header, error) {
	if strings.TrimSpace(header) == "" {
		return nil, ErrNoSignature
	}
	h := &Header{}
	haveT := false
	for elem := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(elem, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return nil, fmt.Errorf("%w: element %q is not key=value", ErrMalformedHeader, strings.TrimSpace(elem))
		}
		switch key {
		case "t":
			if haveT {
				return nil, fmt.Errorf("%w: t given more than once", ErrMalformedHeader)
			}
			sec, err := strconv.ParseUint(value, 10, 64)
			if err != nil || sec > maxUnix {
				return nil, fmt.Errorf("%w: t %q is not a Unix time in seconds", ErrMalformedHeader, value)
			}
			h.Timestamp, h.rawT, haveT = time.Unix(int64(sec), 0), value, true
		case SchemeV1:
			if len(value) != 2*sha256.Size {
				return nil, fmt.Errorf("%w: v1 is %d characters, want %d hex digits", ErrMalformedHeader, len(value), 2*sha256.Size)
			}
			sig, err := hex.DecodeString(value)
			if err != nil {
				return nil, fmt.Errorf("%w: v1 is not hex", ErrMalformedHeader)
			}
			h.Signatures = append(h.Signatures, sig)
		}
	}
	if !haveT {
		return nil, fmt.Errorf("%w: no t", ErrMalformedHeader)
	}
	if len(h.Signatures) == 0 {
		return nil, ErrNoSignature
	}
	return h, nil
}

// Sign returns an x-wc-signature header value for payload signed at t
// (truncated to whole seconds), with one v1 entry per secret in the order
// given: "t=<unix>,v1=<hex>[,v1=<hex>...]". With no secrets it returns just
// "t=<unix>", which Verify rejects with ErrNoSignature. Times before 1970 or
// after year 9999 give a header that ParseHeader rejects as malformed.
func Sign(payload []byte, t time.Time, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.Grow(2 + len(ts) + len(secrets)*(4+2*sha256.Size))
	b.WriteString("t=")
	b.WriteString(ts)
	for _, secret := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(computeMAC(payload, ts, secret)))
	}
	return b.String()
}

// Verify checks that header is a valid signature of payload under secret,
// signed within tolerance of time.Now(). It is VerifyAt with the current
// time; see VerifyAt for the meaning of tolerance and the errors returned.
func Verify(payload []byte, header, secret string, tolerance time.Duration) error {
	return VerifyAt(payload, header, secret, tolerance, time.Now())
}

// VerifyAt checks that header is a valid signature of payload (the raw
// request body) under secret, with its timestamp within tolerance of now.
// A tolerance of 0 means DefaultTolerance; a negative tolerance skips the
// timestamp check (for checking stored deliveries, never live traffic).
//
// It returns nil if any v1 entry matches; ErrNoSecret if secret is empty;
// ErrNoSignature or an error matching ErrMalformedHeader if the header cannot
// be parsed (see ParseHeader); ErrMismatch if no v1 matches; and a
// *TimestampError if a v1 matches but the timestamp is out of tolerance. The
// signature is checked before the timestamp, so a *TimestampError always
// concerns an authentic header. Signatures are compared in constant time.
func VerifyAt(payload []byte, header, secret string, tolerance time.Duration, now time.Time) error {
	if secret == "" {
		return ErrNoSecret
	}
	h, err := ParseHeader(header)
	if err != nil {
		return err
	}
	expected := computeMAC(payload, h.rawT, secret)
	matched := false
	for _, sig := range h.Signatures {
		if hmac.Equal(sig, expected) {
			matched = true
		}
	}
	if !matched {
		return ErrMismatch
	}
	if tolerance < 0 {
		return nil
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	skew := now.Sub(h.Timestamp) // saturates rather than overflowing
	if skew > tolerance || skew < -tolerance {
		return &TimestampError{Timestamp: h.Timestamp, Now: now, Skew: skew, Tolerance: tolerance}
	}
	return nil
}

// computeMAC returns HMAC-SHA256 of "<ts>.<payload>" keyed with secret.
func computeMAC(payload []byte, ts, secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(payload)
	return mac.Sum(nil)
}

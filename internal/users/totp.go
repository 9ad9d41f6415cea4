package users

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6238's default, which authenticator apps expect
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"time"
)

// TOTP (RFC 6238) as authenticator apps do it: HMAC-SHA-1, 30-second steps,
// 6 digits; a code is accepted one step early or late, for clock drift.
const (
	totpStep   = 30
	totpDigits = 6
	totpSkew   = 1
	// totpSecretLen is 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends.
	totpSecretLen = 20
)

var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// hotp is RFC 4226's HOTP of counter with digits digits.
func hotp(secret []byte, counter uint64, digits int) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac := hmac.New(sha1.New, secret)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	code := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, code%mod)
}

// totpStepAt is the time step of t.
func totpStepAt(t time.Time) int64 { return t.Unix() / totpStep }

// TOTPCode is the code for secret at t (what an authenticator app shows).
func TOTPCode(secret []byte, t time.Time) string {
	return hotp(secret, uint64(totpStepAt(t)), totpDigits)
}

// matchTOTP returns the step whose code is code, within the allowed skew
// around now and after last (a step already used is never accepted again),
// and whether there is one.
func matchTOTP(secret []byte, code string, now time.Time, last *int64) (int64, bool) {
	if len(code) != totpDigits {
		return 0, false
	}
	cur := totpStepAt(now)
	for s := cur - totpSkew; s <= cur+totpSkew; s++ {
		if s < 0 || (last != nil && s <= *last) {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(hotp(secret, uint64(s), totpDigits)), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// newTOTPSecret returns a fresh random secret.
func newTOTPSecret() []byte {
	b := make([]byte, totpSecretLen)
	if _, err := rand.Read(b); err != nil {
		panic("users: crypto/rand failed: " + err.Error())
	}
	return b
}

// TOTPEnrolment is what a user types or scans into an authenticator app.
type TOTPEnrolment struct {
	// Secret is the base32 secret, for typing in.
	Secret string
	// URI is the otpauth:// URI authenticator apps read from a QR code.
	URI string
}

func enrolment(secret []byte, issuer, account string) TOTPEnrolment {
	s := totpEncoding.EncodeToString(secret)
	q := url.Values{"secret": {s}, "issuer": {issuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	u := url.URL{Scheme: "otpauth", Host: "totp", Path: "/" + issuer + ":" + account, RawQuery: q.Encode()}
	return TOTPEnrolment{Secret: s, URI: u.String()}
}

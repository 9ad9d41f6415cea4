package users

import (
	"testing"
	"time"
)

// The stored-hash parser, the email check and the TOTP matcher take
// anything without panicking, and a hash matches only its password.
func FuzzCredentials(f *testing.F) {
	f.Add(decoyHash, "password", "ops@example.com", "123456")
	f.Add("$argon2id$v=19$m=1,t=1,p=1$AAAA$AAAA", "", "a@b", "")
	f.Add("$argon2id$v=19$m=99999999,t=99,p=0$$", "x", "Name <x@example.com>", "00000a")
	f.Fuzz(func(t *testing.T, hash, password, email, code string) {
		if len(hash) > 200 {
			return
		}
		if checkPassword(hash, password) && hash == decoyHash {
			t.Fatalf("the decoy matched %q", password)
		}
		if e, err := normalEmail(email); err == nil && (e == "" || len(e) > 254*4) {
			t.Fatalf("accepted %q as %q", email, e)
		}
		matchTOTP([]byte("12345678901234567890"), code, time.Unix(1_800_000_000, 0), nil)
	})
}

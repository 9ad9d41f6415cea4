package users

import (
	"testing"
	"time"
)

// RFC 6238 appendix B, SHA-1 rows: the 20-byte ASCII secret, 8 digits.
func TestTOTPRFCVectors(t *testing.T) {
	secret := []byte("12345678901234567890")
	for _, v := range []struct {
		unix int64
		want string
	}{
		{59, "94287082"},
		{1111111109, "07081804"},
		{1111111111, "14050471"},
		{1234567890, "89005924"},
		{2000000000, "69279037"},
		{20000000000, "65353130"},
	} {
		if got := hotp(secret, uint64(totpStepAt(time.Unix(v.unix, 0))), 8); got != v.want {
			t.Errorf("T=%d: %s, want %s", v.unix, got, v.want)
		}
	}
	// Six digits are the last six of the eight.
	if got := TOTPCode(secret, time.Unix(59, 0)); got != "287082" {
		t.Errorf("6 digits at 59: %s", got)
	}
}

func TestTOTPSkewAndReplay(t *testing.T) {
	secret := newTOTPSecret()
	now := time.Unix(1_800_000_000, 0)
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		if _, ok := matchTOTP(secret, TOTPCode(secret, now.Add(d)), now, nil); !ok {
			t.Errorf("code of now%+v refused", d)
		}
	}
	for _, d := range []time.Duration{-90 * time.Second, -60 * time.Second, 60 * time.Second} {
		if _, ok := matchTOTP(secret, TOTPCode(secret, now.Add(d)), now, nil); ok {
			t.Errorf("code of now%+v accepted", d)
		}
	}
	step, ok := matchTOTP(secret, TOTPCode(secret, now), now, nil)
	if !ok {
		t.Fatal("refused")
	}
	if _, ok := matchTOTP(secret, TOTPCode(secret, now), now, &step); ok {
		t.Error("the same code was accepted twice")
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if _, ok := matchTOTP(secret, bad, now, nil); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPasswordHash(t *testing.T) {
	h := hashPassword("correct horse battery")
	if !checkPassword(h, "correct horse battery") || checkPassword(h, "correct horse batterY") {
		t.Fatal("hash does not check")
	}
	if h == hashPassword("correct horse battery") {
		t.Error("no salt")
	}
	if checkPassword(decoyHash, "") || checkPassword("$argon2id$v=19$m=0,t=0,p=0$$", "x") || checkPassword("plain", "plain") {
		t.Error("a malformed or decoy hash matched")
	}
}

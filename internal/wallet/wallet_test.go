package wallet_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// t0 is the tests' clock; challenges are issued on whole seconds anyway.
var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t   *testing.T
	ctx context.Context
	db  *store.DB
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	return &fixture{t: t, ctx: ctx, db: db}
}

// merchant creates a merchant and returns its scope in mode.
func (f *fixture) merchant(mode tenant.Mode) tenant.Scope {
	f.t.Helper()
	m, err := auth.CreateMerchant(f.ctx, f.db, "acme")
	if err != nil {
		f.t.Fatal(err)
	}
	return tenant.Scope{MerchantID: m.ID, Mode: mode}
}

func (f *fixture) challenge(s tenant.Scope, addr common.Address, now time.Time) wallet.Challenge {
	f.t.Helper()
	c, err := wallet.NewChallenge(f.ctx, f.db, s, addr.Hex(), now)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func newKey(t *testing.T) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey)
}

// signRaw is what personal_sign returns over message, with v as 0/1.
func signRaw(t *testing.T, k *ecdsa.PrivateKey, message string) []byte {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(message)), k)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// sign is personal_sign as wallets return it: v 27/28, 0x hex.
func sign(t *testing.T, k *ecdsa.PrivateKey, message string) string {
	sig := signRaw(t, k, message)
	sig[64] += 27
	return hexutil.Encode(sig)
}

// refused checks that err is invalid_request with a message containing
// every part of want.
func refused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.InvalidRequest {
		t.Fatalf("%s: got %v, want invalid_request", what, err)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Fatalf("%s: message %q does not say %q", what, e.Message, w)
		}
	}
}

// A good signature sets the wallet; a second one replaces it and the first
// is kept as history; Payee follows.
func TestSetAndReplace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.merchant(tenant.Live)
	k1, a1 := newKey(t)
	c := f.challenge(s, a1, t0)
	for _, part := range []string{"Service: tollgate", "Merchant: " + s.MerchantID, "Mode: live", "Address: " + a1.Hex(),
		"Issued At: 2030-01-01T12:00:00Z", "Expiration Time: 2030-01-01T12:10:00Z", "Nonce: "} {
		if !strings.Contains(c.Message, part) {
			t.Fatalf("message lacks %q:\n%s", part, c.Message)
		}
	}
	if c2 := f.challenge(s, a1, t0); c2.Message == c.Message {
		t.Fatal("two challenges have the same message (no nonce)")
	}
	// Only the newest challenge counts: the one above is superseded.
	c = f.challenge(s, a1, t0.Add(time.Second))
	if !c.ExpiresAt.Equal(t0.Add(time.Second + wallet.ChallengeTTL)) {
		t.Fatalf("expires at %s", c.ExpiresAt)
	}
	w, err := wallet.Set(f.ctx, f.db, s, strings.ToLower(a1.Hex()), sign(t, k1, c.Message), t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if w.Address != a1.Hex() || w.Generated || len(w.Previous) != 0 || !w.VerifiedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("set %+v", w)
	}
	if p, err := wallet.Payee(f.ctx, f.db, s); err != nil || p != a1.Hex() {
		t.Fatalf("payee %q %v", p, err)
	}

	k2, a2 := newKey(t)
	c = f.challenge(s, a2, t0.Add(time.Hour))
	if _, err := wallet.Set(f.ctx, f.db, s, a2.Hex(), sign(t, k2, c.Message), t0.Add(time.Hour+time.Minute)); err != nil {
		t.Fatal(err)
	}
	w, ok, err := wallet.Get(f.ctx, f.db, s)
	if err != nil || !ok || w.Address != a2.Hex() || len(w.Previous) != 1 {
		t.Fatalf("get %+v %v %v", w, ok, err)
	}
	prev := w.Previous[0]
	if prev.Address != a1.Hex() || !prev.VerifiedAt.Equal(t0.Add(time.Minute)) || prev.ReplacedAt == nil || !prev.ReplacedAt.Equal(t0.Add(time.Hour+time.Minute)) {
		t.Fatalf("previous %+v", prev)
	}
	if p, _ := wallet.Payee(f.ctx, f.db, s); p != a2.Hex() {
		t.Fatalf("payee after replacement %s", p)
	}
	wr := w.Wire()
	if wr.Source != "verified" || !wr.Livemode || wr.VerifiedAt == nil || len(wr.Previous) != 1 || wr.Previous[0].ReplacedAt == nil {
		t.Fatalf("wire %+v", wr)
	}
	// The other mode is untouched: live wallets never leak into test.
	if p, _ := wallet.Payee(f.ctx, f.db, tenant.Scope{MerchantID: s.MerchantID, Mode: tenant.Test}); p != wallet.TestWallet(s.MerchantID).Hex() {
		t.Fatalf("test-mode payee %s", p)
	}
}

// Every way of getting the signature wrong is refused, says why, and leaves
// the wallet as it was.
func TestSetRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	k, a := newKey(t)
	kOther, aOther := newKey(t)

	t.Run("wrong key", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sign(t, kOther, c.Message), t0)
		refused(t, "wrong key", err, "signature:", "is not "+a.Hex()+"'s signature", fmt.Sprintf("exactly that message, %d bytes", len(c.Message)))
		if strings.Contains(err.Error(), aOther.Hex()) {
			t.Fatalf("the error points at the wallet that signed: %v", err)
		}
	})
	t.Run("wrong address", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		// The signature is good for a, but the operator names another
		// address: it has no challenge.
		_, err := wallet.Set(f.ctx, f.db, s, aOther.Hex(), sign(t, k, c.Message), t0)
		refused(t, "address without a challenge", err, "no challenge for "+aOther.Hex(), "tollgate admin wallet challenge")
		// With a challenge of its own, a's signature is still not its.
		f.challenge(s, aOther, t0)
		_, err = wallet.Set(f.ctx, f.db, s, aOther.Hex(), sign(t, k, c.Message), t0)
		refused(t, "another address's signature", err, "signature:", "not "+aOther.Hex())
	})
	t.Run("expired", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sign(t, k, c.Message), t0.Add(wallet.ChallengeTTL+time.Second))
		refused(t, "10 min + 1 s", err, "expired at 2030-01-01T12:10:00Z", "valid 10m0s")
		if _, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sign(t, k, c.Message), t0.Add(wallet.ChallengeTTL)); err == nil {
			t.Fatal("accepted at exactly 10 minutes")
		}
		// The same signature a second before expiry goes through.
		if _, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sign(t, k, c.Message), t0.Add(wallet.ChallengeTTL-time.Second)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reused", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		sig := sign(t, k, c.Message)
		if _, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sig, t0); err != nil {
			t.Fatal(err)
		}
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sig, t0.Add(time.Second))
		refused(t, "replay", err, "already used", "single-use")
		// A fresh challenge is not satisfied by the old signature either.
		f.challenge(s, a, t0.Add(2*time.Second))
		_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), sig, t0.Add(3*time.Second))
		refused(t, "old signature over a new challenge", err, "signature:")
		if w, _, _ := wallet.Get(f.ctx, f.db, s); len(w.Previous) != 0 {
			t.Fatalf("a refused replay changed history: %+v", w)
		}
	})
	t.Run("superseded challenge", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		old := f.challenge(s, a, t0)
		f.challenge(s, a, t0.Add(time.Second))
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), sign(t, k, old.Message), t0.Add(2*time.Second))
		refused(t, "older challenge", err, "signature:", "newest challenge")
	})
	t.Run("another merchant's challenge", func(t *testing.T) {
		s1, s2 := f.merchant(tenant.Live), f.merchant(tenant.Live)
		c := f.challenge(s1, a, t0)
		_, err := wallet.Set(f.ctx, f.db, s2, a.Hex(), sign(t, k, c.Message), t0)
		refused(t, "no challenge of its own", err, "no challenge for "+a.Hex(), s2.MerchantID)
		f.challenge(s2, a, t0)
		_, err = wallet.Set(f.ctx, f.db, s2, a.Hex(), sign(t, k, c.Message), t0)
		refused(t, "the other merchant's message", err, "signature:")
	})
	t.Run("another mode's challenge", func(t *testing.T) {
		live := f.merchant(tenant.Live)
		test := tenant.Scope{MerchantID: live.MerchantID, Mode: tenant.Test}
		c := f.challenge(test, a, t0)
		_, err := wallet.Set(f.ctx, f.db, live, a.Hex(), sign(t, k, c.Message), t0)
		refused(t, "no live challenge", err, "no challenge", "live mode")
		f.challenge(live, a, t0)
		_, err = wallet.Set(f.ctx, f.db, live, a.Hex(), sign(t, k, c.Message), t0)
		refused(t, "the test-mode message", err, "signature:")
		if _, err := wallet.Payee(f.ctx, f.db, live); apperr.CodeOf(err) != apperr.InvalidRequest {
			t.Fatalf("a refused signature set a live wallet: %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		good := sign(t, k, c.Message)
		for _, bad := range []string{"", "0x", good[2:], "0x" + good[3:], good[:len(good)-2] + "zz", "0X" + good[2:], good + " "} {
			_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), bad, t0)
			refused(t, "signature "+bad, err, "signature: must be 0x-prefixed hex")
		}
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), good[:len(good)-2], t0)
		refused(t, "64 bytes", err, "signature: must be 65 bytes", "got 64")
		_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), good+"00", t0)
		refused(t, "66 bytes", err, "signature: must be 65 bytes")
		_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), "0x"+strings.Repeat("00", wallet.MaxSignature+1), t0)
		refused(t, "too long", err, "signature: must be at most 4096 bytes")
		for _, addr := range []string{"", "0x1234", a.Hex()[2:], "0x" + strings.Repeat("00", 20)} {
			_, err = wallet.Set(f.ctx, f.db, s, addr, good, t0)
			refused(t, "address "+addr, err, "address:")
		}
		// None of that used the challenge: the good signature still works.
		if _, err := wallet.Set(f.ctx, f.db, s, a.Hex(), good, t0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("v values", func(t *testing.T) {
		// Each of 0, 1, 27 and 28 is accepted where it is the signature's
		// recovery id: sign fresh challenges until the parity matches.
		for _, v := range []byte{0, 1, 27, 28} {
			s := f.merchant(tenant.Live)
			var sig []byte
			for i := 0; ; i++ {
				c := f.challenge(s, a, t0)
				if sig = signRaw(t, k, c.Message); sig[64] == v%27 {
					break
				}
				if i == 100 {
					t.Fatalf("no signature with recovery id %d in 100 tries", v%27)
				}
			}
			sig[64] = v
			if _, err := wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(sig), t0); err != nil {
				t.Fatalf("v=%d: %v", v, err)
			}
		}
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		sig := signRaw(t, k, c.Message)
		sig[64] ^= 1
		_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(sig), t0)
		refused(t, "wrong parity", err, "signature:")
		for _, v := range []byte{2, 26, 29, 35, 255} {
			sig[64] = v
			_, err := wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(sig), t0)
			refused(t, "v out of range", err, "signature: has v =", "27 or 28")
		}
	})
	t.Run("high s", func(t *testing.T) {
		s := f.merchant(tenant.Live)
		c := f.challenge(s, a, t0)
		sig := signRaw(t, k, c.Message)
		// (r, n−s) with the other parity is the same signature's malleable
		// twin: the curve accepts it for the same key.
		n := crypto.S256().Params().N
		high := common.LeftPadBytes(new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:64])).Bytes(), 32)
		twin := append(append(append([]byte{}, sig[:32]...), high...), sig[64]^1)
		pub, err := crypto.SigToPub(accounts.TextHash([]byte(c.Message)), twin)
		if err != nil || crypto.PubkeyToAddress(*pub) != a {
			t.Fatalf("the twin does not recover to the key (%v), so the test proves nothing", err)
		}
		twin[64] += 27
		_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(twin), t0)
		refused(t, "high s", err, "signature: has s in the upper half", "malleable")
		for _, rs := range [][2][]byte{{make([]byte, 32), sig[32:64]}, {sig[:32], make([]byte, 32)}, {n.Bytes(), sig[32:64]}} {
			bad := append(append(append([]byte{}, rs[0]...), rs[1]...), 27)
			_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(bad), t0)
			refused(t, "r or s out of range", err, "signature: has r or s out of range")
		}
	})
}

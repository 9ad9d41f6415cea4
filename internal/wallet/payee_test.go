package wallet_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"golang.org/x/crypto/sha3"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// Test mode without a wallet on file settles to a generated wallet: stable,
// a valid checksummed address, distinct per merchant, derived as documented.
// Live mode without one refuses with the operator's next step.
func TestPayeeWithoutWallet(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s1, s2 := f.merchant(tenant.Test), f.merchant(tenant.Test)
	p1, err := wallet.Payee(f.ctx, f.db, s1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := wallet.Payee(f.ctx, f.db, s1); again != p1 {
		t.Fatalf("test wallet changed: %s then %s", p1, again)
	}
	if a, err := wallet.ParseAddress(p1); err != nil || a.Hex() != p1 {
		t.Fatalf("test wallet %q is not a checksummed address: %v", p1, err)
	}
	if p2, _ := wallet.Payee(f.ctx, f.db, s2); p2 == p1 {
		t.Fatal("two merchants share a test wallet")
	}
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte("tollgate test wallet" + s1.MerchantID))
	if want := common.BytesToAddress(h.Sum(nil)).Hex(); p1 != want {
		t.Fatalf("test wallet %s, want the last 20 bytes of keccak256(domain || id) = %s", p1, want)
	}
	// Payments snapshot their payee: the derivation must never change.
	if got := wallet.TestWallet("mer_test").Hex(); got != "0x0F0E8f17d5fD21Ad88E24e514d67eD9222318952" {
		t.Fatalf("TestWallet(mer_test) = %s; the derivation changed", got)
	}
	w, ok, err := wallet.Get(f.ctx, f.db, s1)
	if err != nil || ok || !w.Generated || w.Address != p1 || w.Wire().Source != "generated" || w.Wire().VerifiedAt != nil {
		t.Fatalf("get without a wallet: %+v %v %v", w, ok, err)
	}

	live := tenant.Scope{MerchantID: s1.MerchantID, Mode: tenant.Live}
	_, err = wallet.Payee(f.ctx, f.db, live)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || e.Message != "no settlement wallet on file; set one with tollgate admin wallet set" {
		t.Fatalf("live payee without a wallet: %v", err)
	}
	if w, ok, err := wallet.Get(f.ctx, f.db, live); err != nil || ok || w.Address != "" {
		t.Fatalf("live get without a wallet: %+v %v %v", w, ok, err)
	}
	for _, bad := range []tenant.Mode{"", "prod"} {
		_, err := wallet.Payee(f.ctx, f.db, tenant.Scope{MerchantID: s1.MerchantID, Mode: bad})
		refused(t, "mode "+string(bad), err, "mode:")
	}
}

// Challenges are refused for bad input, naming the field.
func TestChallengeValidation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.merchant(tenant.Test)
	_, a := newKey(t)
	for _, ok := range []string{a.Hex(), strings.ToLower(a.Hex()), "0x" + strings.ToUpper(a.Hex()[2:])} {
		c, err := wallet.NewChallenge(f.ctx, f.db, s, ok, t0)
		if err != nil || c.Address != a.Hex() {
			t.Fatalf("%s: %+v %v", ok, c, err)
		}
	}
	flipped := []byte(a.Hex())
	for i := 2; i < len(flipped); i++ {
		if c := flipped[i]; c >= 'a' && c <= 'f' {
			flipped[i] = c - 'a' + 'A'
			break
		} else if c >= 'A' && c <= 'F' {
			flipped[i] = c - 'A' + 'a'
			break
		}
	}
	for bad, want := range map[string]string{
		string(flipped):                     "address: has a bad EIP-55 checksum",
		"":                                  "address: must be a 0x-prefixed",
		a.Hex()[2:]:                         "address: must be a 0x-prefixed",
		a.Hex()[:41]:                        "address: must be a 0x-prefixed",
		a.Hex() + "0":                       "address: must be a 0x-prefixed",
		"0X" + a.Hex()[2:]:                  "address: must be a 0x-prefixed",
		"0x" + strings.Repeat("g", 40):      "address: must be a 0x-prefixed",
		"0x" + strings.Repeat("0", 40):      "address: must not be the zero address",
		" " + a.Hex()[:41]:                  "address: must be a 0x-prefixed",
		"0x" + strings.Repeat("\u00e9", 20): "address: must be a 0x-prefixed",
	} {
		_, err := wallet.NewChallenge(f.ctx, f.db, s, bad, t0)
		refused(t, "address "+bad, err, want)
	}
	_, err := wallet.NewChallenge(f.ctx, f.db, tenant.Scope{MerchantID: "mer_nope", Mode: tenant.Test}, a.Hex(), t0)
	refused(t, "unknown merchant", err, `merchant: no merchant "mer_nope"`)
	_, err = wallet.NewChallenge(f.ctx, f.db, tenant.Scope{MerchantID: s.MerchantID, Mode: "both"}, a.Hex(), t0)
	refused(t, "bad mode", err, "mode: must be test or live")
}

// Racing changes to one scope's wallet: each signature is used at most
// once, and exactly one wallet is current afterwards.
func TestSetConcurrent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.merchant(tenant.Live)
	k, a := newKey(t)
	c := f.challenge(s, a, t0)
	sig := sign(t, k, c.Message)
	const racers = 8
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() { _, errs[i] = wallet.Set(f.ctx, f.db, s, a.Hex(), sig, t0.Add(time.Second)) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			refused(t, "a losing racer", err, "already used")
		}
	}
	if won != 1 {
		t.Fatalf("%d racers set the wallet with one signature", won)
	}

	// Different wallets at once: all succeed, one after another.
	sigs := make([]string, racers)
	for i := range racers {
		ki, ai := newKey(t)
		sigs[i] = ai.Hex() + " " + sign(t, ki, f.challenge(s, ai, t0).Message)
	}
	for i := range racers {
		wg.Go(func() {
			addr, sig, _ := strings.Cut(sigs[i], " ")
			_, errs[i] = wallet.Set(f.ctx, f.db, s, addr, sig, t0.Add(time.Minute))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	w, ok, err := wallet.Get(f.ctx, f.db, s)
	if err != nil || !ok || len(w.Previous) != racers {
		t.Fatalf("after %d more sets: current %s with %d previous (%v)", racers, w.Address, len(w.Previous), err)
	}
}

// contractWallet stands in for the on-chain rail's ERC-1271 verifier: it
// accepts one long signature and fails like an unreachable node otherwise.
type contractWallet struct{ sig []byte }

func (c contractWallet) Verify(_ context.Context, _ common.Address, _ common.Hash, sig []byte) error {
	if !bytes.Equal(sig, c.sig) {
		return errors.New("eth_call isValidSignature: connection refused")
	}
	return nil
}

// SetWith hands the parsed signature, whatever its length, to the verifier
// it is given; a verifier that cannot answer leaves the challenge unused.
func TestSetWithVerifier(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.merchant(tenant.Live)
	_, a := newKey(t)
	f.challenge(s, a, t0)
	long := bytes.Repeat([]byte{0xab}, 300)
	v := contractWallet{sig: long}
	if _, err := wallet.SetWith(f.ctx, f.db, v, s, a.Hex(), "0x"+strings.Repeat("cd", 300), t0); err == nil || apperr.CodeOf(err) != "" {
		t.Fatalf("an unreachable verifier: %v", err)
	}
	w, err := wallet.SetWith(f.ctx, f.db, v, s, a.Hex(), hexutil.Encode(long), t0)
	if err != nil || w.Address != a.Hex() {
		t.Fatalf("contract wallet: %+v %v", w, err)
	}
	// The default verifier is ECDSA: the same long signature is refused.
	f.challenge(s, a, t0.Add(time.Second))
	_, err = wallet.Set(f.ctx, f.db, s, a.Hex(), hexutil.Encode(long), t0.Add(time.Second))
	refused(t, "long signature for ECDSA", err, "signature: must be 65 bytes")
}

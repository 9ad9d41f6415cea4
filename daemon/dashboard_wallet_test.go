package daemon_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/audit"
)

// challenge asks the wallet page for a challenge for address.
func (br *browser) challenge(address string) (int, map[string]string) {
	br.t.Helper()
	br.get("/dashboard/wallet")
	a := br.post("/dashboard/wallet/challenge", url.Values{"address": {address}})
	var out map[string]string
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		br.t.Fatalf("challenge: %d %s", a.status, a.body)
	}
	return a.status, out
}

func personalSign(t *testing.T, key []byte, message string) string {
	t.Helper()
	k, err := crypto.ToECDSA(key)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(message)), k)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// The wallet changes by the new wallet's signature over the dashboard's
// challenge, never by one over another merchant's or an expired one; only
// the wallet page runs a script, and only its own.
func TestDashboardWallet(t *testing.T) {
	b := setup(t)
	mA, mB := b.merchant("A"), b.merchant("B")
	b.dashUser(t, mA, "a@example.com")
	b.dashUser(t, mB, "b@example.com")
	key := crypto.Keccak256([]byte("dashboard wallet test key"))
	k, _ := crypto.ToECDSA(key)
	addr := crypto.PubkeyToAddress(k.PublicKey).Hex()

	brA, brB := b.browser(t), b.browser(t)
	brA.signIn("a@example.com")
	brB.signIn("b@example.com")
	a := brA.get("/dashboard/wallet")
	csp := a.header.Get("Content-Security-Policy")
	if a.status != 200 || !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(a.body, "generated test wallet") {
		t.Fatalf("wallet page: %d %s", a.status, csp)
	}
	if other := brA.get("/dashboard/developers").header.Get("Content-Security-Policy"); strings.Contains(other, "script-src") {
		t.Fatalf("another page runs script: %s", other)
	}

	// B's challenge signed by the wallet, posted from A's session: refused.
	_, chB := brB.challenge(addr)
	brA.get("/dashboard/wallet")
	if a = brA.post("/dashboard/wallet/set", url.Values{"address": {addr}, "signature": {personalSign(t, key, chB["message"])}}); a.status != 400 {
		t.Fatalf("B's challenge from A: %d", a.status)
	}
	// A's own, expired: refused.
	_, chA := brA.challenge(addr)
	if _, err := b.db.Exec(`UPDATE wallet_challenges SET issued_at = issued_at - interval '1 hour', expires_at = expires_at - interval '1 hour' WHERE merchant_id = $1`, mA); err != nil {
		t.Fatal(err)
	}
	brA.get("/dashboard/wallet")
	if a = brA.post("/dashboard/wallet/set", url.Values{"address": {addr}, "signature": {personalSign(t, key, chA["message"])}}); a.status != 400 || !strings.Contains(a.body, "expired") {
		t.Fatalf("expired challenge: %d", a.status)
	}
	// A fresh one, signed as personal_sign signs its hex: the wallet changes.
	st, chA := brA.challenge(addr)
	if st != 200 || hexutil.Encode([]byte(chA["message"])) != chA["message_hex"] || !strings.Contains(chA["message"], "Merchant: "+mA) {
		t.Fatalf("challenge: %d %v", st, chA)
	}
	sig := personalSign(t, key, chA["message"])
	brA.get("/dashboard/wallet")
	if a = brA.post("/dashboard/wallet/set", url.Values{"address": {addr}, "signature": {sig}}); a.status != http.StatusSeeOther {
		t.Fatalf("set: %d %s", a.status, a.body)
	}
	if a = brA.get("/dashboard/wallet"); !strings.Contains(a.body, addr) {
		t.Fatal("the page does not show the new wallet")
	}
	// Replayed: the challenge is used.
	brA.get("/dashboard/wallet")
	if a = brA.post("/dashboard/wallet/set", url.Values{"address": {addr}, "signature": {sig}}); a.status != 400 {
		t.Fatalf("replayed signature: %d", a.status)
	}
	if a = brB.get("/dashboard/wallet"); strings.Contains(a.body, `id="wallet-address">`+addr) {
		t.Fatal("B's wallet changed")
	}
	a = brA.get("/dashboard/audit")
	if !strings.Contains(a.body, ">"+audit.WalletSet+"<") || !strings.Contains(a.body, ">"+audit.WalletChallenge+"<") {
		t.Fatal("the wallet change is not in the audit log")
	}
}

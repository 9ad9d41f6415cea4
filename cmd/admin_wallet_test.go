package cmd

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// `admin wallet challenge|set|show` end to end: the message `challenge`
// prints is signed by the new wallet's key and fed to `set`; `show` follows;
// replays, bad input and live mode without a wallet are refused.
func TestAdminWallet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.New(t)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, _ := auth.CreateMerchant(ctx, db, "acme")
	scope := []string{"--merchant", m.ID, "--database-url", url}
	key1, _ := crypto.GenerateKey()
	addr1 := crypto.PubkeyToAddress(key1.PublicKey).Hex()

	// Test mode with nothing on file: the generated wallet.
	code, out, errOut := run(append([]string{"admin", "wallet", "show", "--mode", "test", "--json"}, scope...)...)
	var shown map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown["address"] != wallet.TestWallet(m.ID).Hex() || shown["source"] != "generated" {
		t.Fatalf("show test without a wallet: %d %s %s", code, out, errOut)
	}
	// Live mode with nothing on file: an error that says what to run.
	code, out, errOut = run(append([]string{"admin", "wallet", "show", "--mode", "live", "--json"}, scope...)...)
	if code != 1 || out != "" || !strings.Contains(errOut, "no settlement wallet on file; set one with tollgate admin wallet set") {
		t.Fatalf("show live without a wallet: %d %q %s", code, out, errOut)
	}

	// challenge --json: exactly one object with the message and expiry.
	code, out, errOut = run(append([]string{"admin", "wallet", "challenge", "--mode", "live", "--address", strings.ToLower(addr1), "--json"}, scope...)...)
	var ch struct {
		Message   string `json:"message"`
		ExpiresAt string `json:"expires_at"`
		Address   string `json:"address"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if code != 0 || dec.Decode(&ch) != nil || dec.More() || ch.Address != addr1 || !strings.Contains(ch.Message, "Address: "+addr1) {
		t.Fatalf("challenge --json: %d %s %s", code, out, errOut)
	}
	if exp, err := time.Parse(time.RFC3339Nano, ch.ExpiresAt); err != nil || time.Until(exp) < 9*time.Minute || time.Until(exp) > 10*time.Minute {
		t.Fatalf("expires_at %q", ch.ExpiresAt)
	}
	sig1 := personalSignHex(t, key1, ch.Message)
	code, out, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr1, "--signature", sig1}, scope...)...)
	if code != 0 || !strings.Contains(out, addr1) {
		t.Fatalf("set: %d %s %s", code, out, errOut)
	}
	code, _, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr1, "--signature", sig1}, scope...)...)
	if code != 1 || !strings.Contains(errOut, "already used") {
		t.Fatalf("replayed set: %d %s", code, errOut)
	}

	// challenge without --json prints the message alone on stdout, with
	// no trailing newline: what `> message.txt` saves is what to sign.
	key2, _ := crypto.GenerateKey()
	addr2 := crypto.PubkeyToAddress(key2.PublicKey).Hex()
	code, out, errOut = run(append([]string{"admin", "wallet", "challenge", "--mode", "live", "--address", addr2}, scope...)...)
	message := out
	if code != 0 || !strings.HasPrefix(message, "tollgate wants you to confirm") || strings.HasSuffix(message, "\n") ||
		!strings.Contains(errOut, "tollgate admin wallet set --merchant "+m.ID) || !strings.Contains(errOut, fmt.Sprintf("exactly these %d bytes", len(message))) {
		t.Fatalf("challenge: %d %q %s", code, out, errOut)
	}
	// The message with a newline added (echo, an editor) is recognised for
	// what it is; a signature by another wallet does not name that wallet.
	code, out, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr2, "--signature", personalSignHex(t, key2, message+"\n")}, scope...)...)
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("line ending added (%d bytes): sign exactly the %d bytes", len(message)+1, len(message))) {
		t.Fatalf("set with a trailing newline: %d %s %s", code, out, errOut)
	}
	code, out, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr2, "--signature", personalSignHex(t, key1, message)}, scope...)...)
	if code != 1 || strings.Contains(errOut, addr1) ||
		!strings.Contains(errOut, fmt.Sprintf("the signed bytes must be exactly that message, %d bytes", len(message))) {
		t.Fatalf("set with the wrong key: %d %s %s", code, out, errOut)
	}
	code, out, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr2, "--signature", personalSignHex(t, key2, message), "--json"}, scope...)...)
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown["address"] != addr2 || shown["source"] != "verified" {
		t.Fatalf("set --json: %d %s %s", code, out, errOut)
	}
	code, out, _ = run(append([]string{"admin", "wallet", "show", "--mode", "live", "--json"}, scope...)...)
	var w struct {
		Address  string `json:"address"`
		Previous []struct {
			Address    string  `json:"address"`
			ReplacedAt *string `json:"replaced_at"`
		} `json:"previous"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || w.Address != addr2 || len(w.Previous) != 1 || w.Previous[0].Address != addr1 || w.Previous[0].ReplacedAt == nil {
		t.Fatalf("show live: %d %s", code, out)
	}
	code, out, _ = run(append([]string{"admin", "wallet", "show", "--mode", "live"}, scope...)...)
	if code != 0 || !strings.Contains(out, addr2) || !strings.Contains(out, "Previous:") || !strings.Contains(out, addr1) {
		t.Fatalf("show table: %d %s", code, out)
	}

	// Usage errors exit 2; bad values exit 1 naming the field.
	for _, args := range [][]string{
		{"admin", "wallet", "challenge", "--mode", "live", "--database-url", url, "--address", addr1},
		{"admin", "wallet", "challenge", "--mode", "prod", "--merchant", m.ID, "--database-url", url, "--address", addr1},
		{"admin", "wallet", "challenge", "--mode", "live", "--merchant", m.ID, "--database-url", url},
		{"admin", "wallet", "set", "--mode", "live", "--merchant", m.ID, "--database-url", url, "--address", addr1},
		{"admin", "wallet", "show", "--merchant", m.ID, "--database-url", url},
	} {
		if code, _, errOut := run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errOut, ExitUsage)
		}
	}
	code, _, errOut = run(append([]string{"admin", "wallet", "challenge", "--mode", "live", "--address", "0x1234"}, scope...)...)
	if code != 1 || !strings.Contains(errOut, "address: must be a 0x-prefixed 20-byte hex address") {
		t.Fatalf("bad address: %d %s", code, errOut)
	}
	code, _, errOut = run(append([]string{"admin", "wallet", "set", "--mode", "live", "--address", addr1, "--signature", "0xnope"}, scope...)...)
	if code != 1 || !strings.Contains(errOut, "signature: must be 0x-prefixed hex") {
		t.Fatalf("bad signature: %d %s", code, errOut)
	}
	assertAudited(t, db, m.ID, audit.WalletChallenge, audit.WalletSet, audit.WalletChallenge, audit.WalletSet)
}

// personalSignHex signs message as a wallet's personal_sign does (EIP-191,
// v 27/28).
func personalSignHex(t *testing.T, key *ecdsa.PrivateKey, message string) string {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(message)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

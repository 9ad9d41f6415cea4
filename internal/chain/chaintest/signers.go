package chaintest

import (
	"bufio"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// SignerNames are the independent EIP-712 signers tests sign typed data
// with: ethers v6 and viem, from daemon/testdata/wallet's lockfile.
var SignerNames = []string{"ethers", "viem"}

// Signers is a Node process signing typed data with ethers and viem
// (daemon/testdata/wallet/sign.mjs): the JSON a wallet would be handed
// goes in as it is, so what they refuse, real wallets refuse.
type Signers struct {
	t   testing.TB
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Scanner
	n   int
}

// WalletDir finds daemon/testdata/wallet from a package directory (its
// relative path there, e.g. "testdata/wallet" in daemon), with its
// node_modules installed; without them the test is skipped, never under CI.
func WalletDir(t testing.TB, rel string) string {
	t.Helper()
	dir, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "viem")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the wallet signers are not installed: npm ci in %s", dir)
		}
		t.Skipf("the wallet signers are not installed (npm ci in %s)", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	return dir
}

// StartSigners starts the signing process in dir (see WalletDir); it ends
// with the test.
func StartSigners(t testing.TB, dir string) *Signers {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(dir, "sign.mjs"))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &Signers{t: t, in: in, out: sc}
}

// Sign has signer ("ethers" or "viem") sign typed (the JSON as served)
// with key, and returns the 0x signature or the signer's refusal.
func (s *Signers) Sign(signer string, key *ecdsa.PrivateKey, typed json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	req, err := json.Marshal(map[string]any{"id": s.n, "signer": signer, "key": hexutil.Encode(crypto.FromECDSA(key)), "typed": typed})
	if err != nil {
		return "", err
	}
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		return "", err
	}
	if !s.out.Scan() {
		return "", fmt.Errorf("the signer process ended: %v", s.out.Err())
	}
	var res struct {
		ID        int    `json:"id"`
		Signature string `json:"signature"`
		Error     string `json:"error"`
	}
	if err := json.Unmarshal(s.out.Bytes(), &res); err != nil || res.ID != s.n {
		return "", fmt.Errorf("the signer answered %q: %v", s.out.Text(), err)
	}
	if res.Error != "" {
		return "", fmt.Errorf("%s refused to sign: %s", signer, res.Error)
	}
	return res.Signature, nil
}

// MustSign is Sign failing the test on a refusal.
func (s *Signers) MustSign(signer string, key *ecdsa.PrivateKey, typed json.RawMessage) string {
	s.t.Helper()
	sig, err := s.Sign(signer, key, typed)
	if err != nil {
		s.t.Fatal(err)
	}
	return sig
}

package wallet_test

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// The parsers of what the operator pastes: none may panic, every refusal is
// invalid_request naming its field, and what they accept satisfies what Set
// relies on.

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"0x5B38Da6a701c568545dCfcB03FcB875f56beddC4", "0x5b38da6a701c568545dcfcb03fcb875f56beddc4",
		"0x5B38DA6A701C568545DCFCB03FCB875F56BEDDC4", "0x5b38Da6a701c568545dCfcB03FcB875f56beddC4",
		"0x0000000000000000000000000000000000000000", "0x", "", "5B38Da6a701c568545dCfcB03FcB875f56beddC4",
		"0X5B38Da6a701c568545dCfcB03FcB875f56beddC4", "0x5B38Da6a701c568545dCfcB03FcB875f56beddC",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := wallet.ParseAddress(s)
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "address: ") {
				t.Fatalf("%q: error %v", s, err)
			}
			return
		}
		// Accepted: the same 20 bytes in any accepted spelling, never zero,
		// and the checksummed form is one of the accepted spellings.
		if a == (common.Address{}) || !strings.EqualFold(a.Hex(), s) {
			t.Fatalf("%q parsed as %s", s, a.Hex())
		}
		body := s[2:]
		if body != strings.ToLower(body) && body != strings.ToUpper(body) && s != a.Hex() {
			t.Fatalf("%q: mixed case accepted without a valid checksum", s)
		}
		for _, spelling := range []string{a.Hex(), strings.ToLower(a.Hex())} {
			if b, err := wallet.ParseAddress(spelling); err != nil || b != a {
				t.Fatalf("%q (from %q) refused: %v", spelling, s, err)
			}
		}
	})
}

func FuzzParseSignature(f *testing.F) {
	for _, s := range []string{
		"0x" + strings.Repeat("ab", 65), "0x" + strings.Repeat("AB", 65) + "1b", "0x", "0x0", "0xzz", "", "ab",
		"0X" + strings.Repeat("00", 65), "0x" + strings.Repeat("00", wallet.MaxSignature+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := wallet.ParseSignature(s)
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "signature: ") {
				t.Fatalf("%q: error %v", s, err)
			}
			return
		}
		if len(b) == 0 || len(b) > wallet.MaxSignature || "0x"+strings.ToLower(common.Bytes2Hex(b)) != strings.ToLower(s) || !strings.HasPrefix(s, "0x") {
			t.Fatalf("%q parsed as %x", s, b)
		}
	})
}

// FuzzRecover feeds arbitrary 65-byte signatures to the recovery: no panic,
// refusals name the signature, and anything accepted is in canonical form
// (v 0/1/27/28, low s) and recovers the same as go-ethereum does.
func FuzzRecover(f *testing.F) {
	key, _ := crypto.HexToECDSA("b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291")
	digest := crypto.Keccak256Hash([]byte("challenge"))
	good, _ := crypto.Sign(digest[:], key)
	f.Add(digest[:], good)
	f.Add(digest[:], append(good[:64:64], good[64]+27))
	f.Add(digest[:], make([]byte, 65))
	f.Add([]byte{}, []byte{1})
	halfN := new(big.Int).Rsh(crypto.S256().Params().N, 1)
	f.Fuzz(func(t *testing.T, d, sig []byte) {
		a, err := wallet.Recover(common.BytesToHash(d), sig)
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "signature: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		v := sig[64]
		if len(sig) != 65 || (v != 0 && v != 1 && v != 27 && v != 28) || new(big.Int).SetBytes(sig[32:64]).Cmp(halfN) > 0 {
			t.Fatalf("accepted %x", sig)
		}
		norm := bytes.Clone(sig)
		norm[64] = v % 27
		h := common.BytesToHash(d)
		pub, err := crypto.Ecrecover(h[:], norm)
		if err != nil || common.BytesToAddress(crypto.Keccak256(pub[1:])[12:]) != a {
			t.Fatalf("recovered %s, go-ethereum says %x (%v)", a.Hex(), pub, err)
		}
	})
}

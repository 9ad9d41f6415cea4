package chain

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

const sampleAuth = `{"from":"0x5B38Da6a701c568545dCfcB03FcB875f56beddC4","to":"0xab8483f64d9c6d1ecf9b849ae677dd3315835cb2",
"value":"25000000","validAfter":0,"validBefore":"1767225600",
"nonce":"0x1111111111111111111111111111111111111111111111111111111111111111",
"signature":"0x` + "aa" + `"}`

func TestParseTransferAuthorization(t *testing.T) {
	t.Parallel()
	a, err := ParseTransferAuthorization([]byte(sampleAuth))
	if err != nil {
		t.Fatal(err)
	}
	if a.From != common.HexToAddress("0x5B38Da6a701c568545dCfcB03FcB875f56beddC4") || a.Value.Int64() != 25_000_000 ||
		a.ValidAfter.Sign() != 0 || a.ValidBefore.Int64() != 1767225600 || !bytes.Equal(a.Signature, []byte{0xaa}) {
		t.Fatalf("parsed %+v", a)
	}
	bad := []struct{ body, field string }{
		{strings.Replace(sampleAuth, `"25000000"`, `"2.5"`, 1), "value"},
		{strings.Replace(sampleAuth, `"25000000"`, `-1`, 1), "value"},
		{strings.Replace(sampleAuth, `"25000000"`, `"1e6"`, 1), "value"},
		{strings.Replace(sampleAuth, `"25000000"`, `"`+strings.Repeat("9", 79)+`"`, 1), "value"},
		{strings.Replace(sampleAuth, `"1767225600"`, `"115792089237316195423570985008687907853269984665640564039457584007913129639936"`, 1), "validBefore"},
		{strings.Replace(sampleAuth, `0x5B38Da6a701c568545dCfcB03FcB875f56beddC4`, `0x5b38Da6a701c568545dCfcB03FcB875f56beddC4`, 1), "from"},
		{strings.Replace(sampleAuth, `0xab8483f64d9c6d1ecf9b849ae677dd3315835cb2`, `0xab8483f64d9c6d1ecf9b849ae677dd3315835c`, 1), "to"},
		{strings.Replace(sampleAuth, `"nonce":"0x11`, `"nonce":"0x1`, 1), "nonce"},
		{strings.Replace(sampleAuth, `"signature":"0xaa"`, `"signature":"aa"`, 1), "signature"},
		{strings.Replace(sampleAuth, `"signature":"0xaa"`, `"signature":"0xaa","extra":1`, 1), "extra"},
		{strings.Replace(sampleAuth, `"validAfter":0,`, ``, 1), "validAfter"},
	}
	for _, c := range bad {
		_, err := ParseTransferAuthorization([]byte(c.body))
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, c.field+":") {
			t.Errorf("%s: got %v, want invalid_request naming %s", c.field, err, c.field)
		}
	}
	if _, err := ParseTransferAuthorization([]byte(`{`)); apperr.CodeOf(err) != apperr.InvalidJSON {
		t.Errorf("broken JSON: %v", err)
	}
}

func TestRecoverRefusesMalleableSignatures(t *testing.T) {
	t.Parallel()
	k, _ := crypto.GenerateKey()
	digest := crypto.Keccak256Hash([]byte("x"))
	sig, _ := crypto.Sign(digest[:], k)
	sig[64] += 27
	got, err := Recover(digest, sig)
	if err != nil || got != crypto.PubkeyToAddress(k.PublicKey) {
		t.Fatalf("recover: %v %v", got, err)
	}
	high := append([]byte(nil), sig...)
	s := new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig[32:64]))
	copy(high[32:64], s.FillBytes(make([]byte, 32)))
	high[64] ^= 1 // 27 <-> 28
	if _, err := Recover(digest, high); err == nil {
		t.Fatal("a high-s signature was accepted")
	}
	if _, err := Recover(digest, sig[:64]); err == nil {
		t.Fatal("a 64-byte signature was accepted")
	}
}

// TestTypeHashes pins the EIP-712 type strings to the ones USDC uses.
func TestTypeHashes(t *testing.T) {
	t.Parallel()
	d := Domain{Name: "USD Coin", Version: "2", ChainID: big.NewInt(8453), VerifyingContract: common.Address{1}}
	cases := map[string]string{
		"TransferWithAuthorization": "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267",
		"Permit":                    "0x6e71edae12b1b97f4d1f60370fef10105fa2faae0126114a169c64845d6126c9",
		"CancelAuthorization":       "0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429",
	}
	tds := map[string]func() []byte{
		"TransferWithAuthorization": func() []byte {
			td := TransferTypedData(d, TransferAuthorization{Value: new(big.Int), ValidAfter: new(big.Int), ValidBefore: new(big.Int)})
			return td.TypeHash(td.PrimaryType)
		},
		"Permit": func() []byte {
			td := PermitTypedData(d, Permit{Value: new(big.Int), Nonce: new(big.Int), Deadline: new(big.Int)})
			return td.TypeHash(td.PrimaryType)
		},
		"CancelAuthorization": func() []byte {
			td := CancelTypedData(d, common.Address{}, common.Hash{})
			return td.TypeHash(td.PrimaryType)
		},
	}
	for name, want := range cases {
		if got := common.BytesToHash(tds[name]()).Hex(); got != want {
			t.Errorf("%s type hash %s, want %s", name, got, want)
		}
	}
	// The typed data marshals to what eth_signTypedData_v4 takes.
	b, err := json.Marshal(TransferTypedData(d, TransferAuthorization{Value: big.NewInt(1), ValidAfter: new(big.Int), ValidBefore: big.NewInt(2)}))
	if err != nil || !bytes.Contains(b, []byte(`"primaryType":"TransferWithAuthorization"`)) || !bytes.Contains(b, []byte(`"chainId":"0x2105"`)) {
		t.Fatalf("typed data JSON %s (%v)", b, err)
	}
}

func FuzzParseTransferAuthorization(f *testing.F) {
	f.Add([]byte(sampleAuth))
	f.Add([]byte(`{"value":1e400}`))
	f.Add([]byte(`{"from":"0x","signature":"0x` + strings.Repeat("ab", 70) + `"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := ParseTransferAuthorization(body)
		if err != nil {
			if apperr.CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		for _, v := range []*big.Int{a.Value, a.ValidAfter, a.ValidBefore} {
			if v == nil || v.Sign() < 0 || v.BitLen() > 256 {
				t.Fatalf("out of uint256: %v", v)
			}
		}
		if len(a.Signature) == 0 || len(a.Signature) > maxSignature {
			t.Fatalf("signature of %d bytes", len(a.Signature))
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	f.Add("0x5B38Da6a701c568545dCfcB03FcB875f56beddC4")
	f.Add("0x5b38da6a701c568545dcfcb03fcb875f56beddc4")
	f.Add("0xZZ")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		if !strings.EqualFold(a.Hex(), s) {
			t.Fatalf("%q parsed as %s", s, a.Hex())
		}
	})
}

func FuzzParseUint256(f *testing.F) {
	f.Add("0")
	f.Add("115792089237316195423570985008687907853269984665640564039457584007913129639935")
	f.Add("-1")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseUint256(s)
		if err != nil {
			return
		}
		if v.Sign() < 0 || v.BitLen() > 256 || v.String() != strings.TrimLeft(s, "0") && !(v.Sign() == 0 && strings.Trim(s, "0") == "") {
			t.Fatalf("%q parsed as %v", s, v)
		}
	})
}

func FuzzRecover(f *testing.F) {
	f.Add(make([]byte, 65))
	f.Fuzz(func(t *testing.T, sig []byte) {
		// Must never panic, whatever the bytes.
		_, _ = Recover(common.Hash{1}, sig)
	})
}

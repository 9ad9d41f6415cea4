package chain

import (
	"encoding/json"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// maxSignature bounds an ERC-1271 signature (a smart wallet's may be much
// longer than 65 bytes, e.g. a passkey's WebAuthn assertion).
const maxSignature = 4096

// ParseTransferAuthorization reads the JSON object the checkout page posts:
//
//	{"from":"0x…","to":"0x…","value":"1000000","validAfter":"0",
//	 "validBefore":"1767225600","nonce":"0x…32 bytes","signature":"0x…"}
//
// Integers are decimal strings or JSON integers (uint256). It fails with
// invalid_json or invalid_request naming the field.
func ParseTransferAuthorization(body []byte) (TransferAuthorization, error) {
	o, err := fields.Decode(body)
	if err != nil {
		return TransferAuthorization{}, err
	}
	var a TransferAuthorization
	a.From = address(o, "from")
	a.To = address(o, "to")
	a.Value = uint256(o, "value")
	a.ValidAfter = uint256(o, "validAfter")
	a.ValidBefore = uint256(o, "validBefore")
	a.Nonce = hash32(o, "nonce")
	if s := o.RequiredString("signature", 1, 2+2*maxSignature); s != "" {
		sig, err := ParseSignature(s)
		if err != nil {
			o.Fail(apperr.Field("signature", "%s", err.(*apperr.Error).Message))
		}
		a.Signature = sig
	}
	if err := o.Err(); err != nil {
		return TransferAuthorization{}, err
	}
	return a, nil
}

// ParseAddress reads a 0x-prefixed 20-byte hex address. Mixed case must be a
// valid EIP-55 checksum, so a typo in a copied address is caught. It fails
// with invalid_request.
func ParseAddress(s string) (common.Address, error) {
	if !strings.HasPrefix(s, "0x") || len(s) != 42 {
		return common.Address{}, apperr.New(apperr.InvalidRequest, "must be a 0x-prefixed 20-byte hex address")
	}
	b, err := hexutil.Decode(s)
	if err != nil {
		return common.Address{}, apperr.New(apperr.InvalidRequest, "must be a 0x-prefixed 20-byte hex address")
	}
	a := common.BytesToAddress(b)
	body := s[2:]
	if body != strings.ToLower(body) && body != strings.ToUpper(body) && a.Hex() != s {
		return common.Address{}, apperr.New(apperr.InvalidRequest, "has a bad EIP-55 checksum")
	}
	return a, nil
}

// ParseSignature reads a 0x-prefixed hex signature: 65 bytes (r, s, v) from
// an EOA, or up to 4096 bytes for an ERC-1271 wallet. It fails with
// invalid_request.
func ParseSignature(s string) ([]byte, error) {
	b, err := hexutil.Decode(s)
	if err != nil || len(b) == 0 {
		return nil, apperr.New(apperr.InvalidRequest, "must be 0x-prefixed hex")
	}
	if len(b) > maxSignature {
		return nil, apperr.New(apperr.InvalidRequest, "must be at most %d bytes", maxSignature)
	}
	return b, nil
}

// ParseUint256 reads a decimal string of at most 78 digits that fits in
// uint256. It fails with invalid_request.
func ParseUint256(s string) (*big.Int, error) {
	if s == "" || len(s) > 78 {
		return nil, apperr.New(apperr.InvalidRequest, "must be a non-negative integer below 2^256")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, apperr.New(apperr.InvalidRequest, "must be a non-negative integer below 2^256")
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.BitLen() > 256 {
		return nil, apperr.New(apperr.InvalidRequest, "must be a non-negative integer below 2^256")
	}
	return v, nil
}

func address(o *fields.Object, name string) common.Address {
	s := o.RequiredString(name, 1, 64)
	if s == "" {
		return common.Address{}
	}
	a, err := ParseAddress(s)
	if err != nil {
		o.Fail(apperr.Field(name, "%s", err.(*apperr.Error).Message))
	}
	return a
}

func hash32(o *fields.Object, name string) common.Hash {
	s := o.RequiredString(name, 1, 80)
	if s == "" {
		return common.Hash{}
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != 32 {
		o.Fail(apperr.Field(name, "must be 0x-prefixed hex of 32 bytes"))
		return common.Hash{}
	}
	return common.BytesToHash(b)
}

// uint256 reads a decimal string or a JSON integer.
func uint256(o *fields.Object, name string) *big.Int {
	raw := o.Raw(name)
	if raw == nil {
		o.Fail(apperr.Field(name, "is required"))
		return new(big.Int)
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			o.Fail(apperr.Field(name, "must be a decimal string or an integer"))
			return new(big.Int)
		}
	} else {
		s = string(raw)
	}
	v, err := ParseUint256(s)
	if err != nil {
		o.Fail(apperr.Field(name, "%s", err.(*apperr.Error).Message))
		return new(big.Int)
	}
	return v
}

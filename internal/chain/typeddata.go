package chain

import (
	"crypto/ecdsa"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// Domain is an EIP-712 domain with the four fields USDC and PlanManager use.
type Domain struct {
	Name              string
	Version           string
	ChainID           *big.Int
	VerifyingContract common.Address
}

func (d Domain) typed() apitypes.TypedDataDomain {
	return apitypes.TypedDataDomain{
		Name:              d.Name,
		Version:           d.Version,
		ChainId:           (*math.HexOrDecimal256)(new(big.Int).Set(d.ChainID)),
		VerifyingContract: d.VerifyingContract.Hex(),
	}
}

var domainType = []apitypes.Type{
	{Name: "name", Type: "string"},
	{Name: "version", Type: "string"},
	{Name: "chainId", Type: "uint256"},
	{Name: "verifyingContract", Type: "address"},
}

// TransferAuthorization is a signed EIP-3009 TransferWithAuthorization: the
// payer's (or, for a refund, the merchant's) permission for anyone to move
// Value from From to To between ValidAfter and ValidBefore (unix seconds,
// both exclusive), once.
type TransferAuthorization struct {
	From        common.Address
	To          common.Address
	Value       *big.Int
	ValidAfter  *big.Int
	ValidBefore *big.Int
	Nonce       common.Hash
	Signature   []byte
}

// TransferTypedData returns the typed data a wallet signs with
// eth_signTypedData_v4 for a in domain d (the token's; see Token.Domain).
// The signature field of a is ignored.
func TransferTypedData(d Domain, a TransferAuthorization) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": domainType,
			"TransferWithAuthorization": {
				{Name: "from", Type: "address"},
				{Name: "to", Type: "address"},
				{Name: "value", Type: "uint256"},
				{Name: "validAfter", Type: "uint256"},
				{Name: "validBefore", Type: "uint256"},
				{Name: "nonce", Type: "bytes32"},
			},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain:      d.typed(),
		Message: apitypes.TypedDataMessage{
			"from":        a.From.Hex(),
			"to":          a.To.Hex(),
			"value":       a.Value.String(),
			"validAfter":  a.ValidAfter.String(),
			"validBefore": a.ValidBefore.String(),
			"nonce":       a.Nonce.Hex(),
		},
	}
}

// CancelTypedData returns the typed data for EIP-3009 cancelAuthorization.
func CancelTypedData(d Domain, authorizer common.Address, nonce common.Hash) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": domainType,
			"CancelAuthorization": {
				{Name: "authorizer", Type: "address"},
				{Name: "nonce", Type: "bytes32"},
			},
		},
		PrimaryType: "CancelAuthorization",
		Domain:      d.typed(),
		Message: apitypes.TypedDataMessage{
			"authorizer": authorizer.Hex(),
			"nonce":      nonce.Hex(),
		},
	}
}

// Permit is an EIP-2612 permit: Owner lets Spender pull up to Value until
// Deadline; Nonce is the token's nonces(owner) at signing.
type Permit struct {
	Owner    common.Address
	Spender  common.Address
	Value    *big.Int
	Nonce    *big.Int
	Deadline *big.Int
}

// PermitTypedData returns the typed data of p in the token's domain d.
func PermitTypedData(d Domain, p Permit) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": domainType,
			"Permit": {
				{Name: "owner", Type: "address"},
				{Name: "spender", Type: "address"},
				{Name: "value", Type: "uint256"},
				{Name: "nonce", Type: "uint256"},
				{Name: "deadline", Type: "uint256"},
			},
		},
		PrimaryType: "Permit",
		Domain:      d.typed(),
		Message: apitypes.TypedDataMessage{
			"owner":    p.Owner.Hex(),
			"spender":  p.Spender.Hex(),
			"value":    p.Value.String(),
			"nonce":    p.Nonce.String(),
			"deadline": p.Deadline.String(),
		},
	}
}

// Digest returns the EIP-712 digest of td: what is signed and recovered.
// It fails with invalid_request when td does not encode (a value out of its
// type's range, an unknown type).
func Digest(td apitypes.TypedData) (common.Hash, error) {
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return common.Hash{}, apperr.New(apperr.InvalidRequest, "typed data: %v", err)
	}
	return common.BytesToHash(h), nil
}

// SignTypedData signs td with key as eth_signTypedData_v4 does (v is 27 or
// 28). It is for test payers and merchants who keep a hot refund key.
func SignTypedData(key *ecdsa.PrivateKey, td apitypes.TypedData) ([]byte, error) {
	h, err := Digest(td)
	if err != nil {
		return nil, err
	}
	sig, err := crypto.Sign(h[:], key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	return sig, nil
}

// Recover returns the address whose key made the 65-byte signature sig over
// digest. It fails with a Failure (invalid_signature) for a malformed or
// malleable (high-s) signature, which the token would refuse too.
func Recover(digest common.Hash, sig []byte) (common.Address, error) {
	if len(sig) != 65 {
		return common.Address{}, fail(InvalidSignature, "an EOA signature is 65 bytes, got %d", len(sig))
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, fail(InvalidSignature, "signature values out of range")
	}
	norm := make([]byte, 65)
	copy(norm, sig)
	norm[64] = v
	pub, err := crypto.SigToPub(digest[:], norm)
	if err != nil {
		return common.Address{}, fail(InvalidSignature, "%v", err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

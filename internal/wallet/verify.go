package wallet

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// Verifier decides whether sig is signer's signature over digest, the
// EIP-191 hash of a challenge's message (accounts.TextHash). It returns an
// *apperr.Error (invalid_request naming `signature`) when it is not, and any
// other error when it could not find out (a node that did not answer).
//
// ECDSA covers externally owned accounts. Smart-contract wallets (Safe,
// passkey and other account-abstraction wallets) sign by contract code, so
// the on-chain rail supplies a Verifier that asks the wallet through
// eth_call of ERC-1271 isValidSignature(digest, sig) when the address has
// code, and falls back to ECDSA when it has none (chain.VerifySignature
// does both); it is passed to SetWith.
type Verifier interface {
	Verify(ctx context.Context, signer common.Address, digest common.Hash, sig []byte) error
}

// ECDSA verifies signatures of externally owned accounts: 65 bytes r‖s‖v
// as personal_sign returns them, v 27/28 (or 0/1), recovered with
// secp256k1. It refuses high-s signatures: for every signature (r, s) the
// curve also accepts (r, n−s), and accepting only the low half (EIP-2)
// means one signed challenge has exactly one accepted encoding.
type ECDSA struct{}

var _ Verifier = ECDSA{}

// secp256k1N is the order of the curve's group.
var secp256k1N = crypto.S256().Params().N

// Verify returns nil when sig recovers to signer, and invalid_request
// naming `signature` otherwise.
func (ECDSA) Verify(_ context.Context, signer common.Address, digest common.Hash, sig []byte) error {
	got, err := Recover(digest, sig)
	if err != nil {
		return err
	}
	if got != signer {
		return apperr.Field("signature", "was made by %s, not %s: sign the newest challenge's message with the wallet being set", got.Hex(), signer.Hex())
	}
	return nil
}

// Recover returns the address whose key made the 65-byte signature sig over
// digest. It fails with invalid_request naming `signature` when sig is not
// 65 bytes, v is not 0, 1, 27 or 28, r or s is out of range, or s is in the
// upper half of the curve order.
func Recover(digest common.Hash, sig []byte) (common.Address, error) {
	if len(sig) != 65 {
		return common.Address{}, apperr.Field("signature", "must be 65 bytes (r, s, v) as personal_sign returns it, got %d", len(sig))
	}
	v := sig[64]
	switch v {
	case 27, 28:
		v -= 27
	case 0, 1:
	default:
		return common.Address{}, apperr.Field("signature", "has v = %d; it must be 27 or 28 (or 0 or 1)", sig[64])
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(secp256k1N) >= 0 || s.Cmp(secp256k1N) >= 0 {
		return common.Address{}, apperr.Field("signature", "has r or s out of range")
	}
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, apperr.Field("signature", "has s in the upper half of the curve order (a malleable encoding); wallets sign with low s, so sign the message again")
	}
	norm := make([]byte, 65)
	copy(norm, sig)
	norm[64] = v
	pub, err := crypto.SigToPub(digest[:], norm)
	if err != nil {
		return common.Address{}, apperr.Field("signature", "does not recover to any key: %v", err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

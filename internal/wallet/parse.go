package wallet

import (
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// MaxSignature bounds a signature's length in bytes. An EOA's is 65; the
// bound leaves room for smart-contract wallets (ERC-1271), whose signatures
// can be far longer (a passkey's WebAuthn assertion, a multisig's several).
const MaxSignature = 4096

// ParseAddress reads a 0x-prefixed 20-byte hex address. Mixed case must be a
// valid EIP-55 checksum, so a typo in a copied address is caught; all
// lowercase or all uppercase hex carries no checksum and is accepted. The
// zero address is refused: nobody can sign for it, and funds sent there are
// lost. It fails with invalid_request naming `address`.
func ParseAddress(s string) (common.Address, error) {
	if len(s) != 42 || !strings.HasPrefix(s, "0x") {
		return common.Address{}, apperr.Field("address", "must be a 0x-prefixed 20-byte hex address (0x and 40 hex digits)")
	}
	b, err := hexutil.Decode(s)
	if err != nil {
		return common.Address{}, apperr.Field("address", "must be a 0x-prefixed 20-byte hex address (0x and 40 hex digits)")
	}
	a := common.BytesToAddress(b)
	body := s[2:]
	if body != strings.ToLower(body) && body != strings.ToUpper(body) && a.Hex() != s {
		return common.Address{}, apperr.Field("address", "has a bad EIP-55 checksum: check it for a typo (mixed case must match the checksum; all lowercase is accepted)")
	}
	if a == (common.Address{}) {
		return common.Address{}, apperr.Field("address", "must not be the zero address")
	}
	return a, nil
}

// ParseSignature reads a 0x-prefixed hex signature of 1 to MaxSignature
// bytes. Whether its length and values make sense is the Verifier's call
// (an EOA's is exactly 65 bytes). It fails with invalid_request naming
// `signature`.
func ParseSignature(s string) ([]byte, error) {
	if len(s) > 2+2*MaxSignature {
		return nil, apperr.Field("signature", "must be at most %d bytes", MaxSignature)
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) == 0 || !strings.HasPrefix(s, "0x") {
		return nil, apperr.Field("signature", "must be 0x-prefixed hex with an even number of digits")
	}
	return b, nil
}

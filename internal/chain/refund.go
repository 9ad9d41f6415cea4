package chain

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// RefundAuthorization returns the unsigned EIP-3009 authorization that
// refunds value from the merchant's wallet to the payer, and the typed data
// the merchant signs for it (what `admin refund` prints; its signature, or
// SignTypedData with a hot refund key, fills a.Signature). The nonce is
// NonceFor(refundID), so a refund has exactly one authorization, valid from
// now (the latest block's time) for validFor (zero: 24 hours). It fails with
// invalid_request for a non-positive value, and with a plain error when the
// token's domain or the head cannot be read.
func (t *Token) RefundAuthorization(ctx context.Context, merchant, payer common.Address, value *big.Int, refundID string, validFor time.Duration) (TransferAuthorization, apitypes.TypedData, error) {
	if value == nil || value.Sign() <= 0 {
		return TransferAuthorization{}, apitypes.TypedData{}, apperr.Field("amount", "must be positive")
	}
	if validFor == 0 {
		validFor = 24 * time.Hour
	}
	head, err := t.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return TransferAuthorization{}, apitypes.TypedData{}, fmt.Errorf("latest block: %w", err)
	}
	d, err := t.Domain(ctx)
	if err != nil {
		return TransferAuthorization{}, apitypes.TypedData{}, err
	}
	a := TransferAuthorization{
		From: merchant, To: payer, Value: new(big.Int).Set(value),
		ValidAfter:  new(big.Int),
		ValidBefore: new(big.Int).SetUint64(head.Time + uint64(validFor/time.Second)),
		Nonce:       NonceFor(refundID),
	}
	return a, TransferTypedData(d, a), nil
}

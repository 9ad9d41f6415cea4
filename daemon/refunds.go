package daemon

import (
	"context"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A live refund is paid from the merchant's settlement wallet, which must
// authorize it (EIP-3009): tollgate never holds that key. `admin refund`
// prints the terms and takes the signature back as a flag; the dashboard's
// payment page hands the terms to the browser wallet and posts its
// signature. Both build the terms, read the signature and issue the refund
// with the functions below, so the two cannot drift apart.

// RefundTerms is what the settlement wallet signs for a live refund.
type RefundTerms struct {
	// Wallet is the payment's payee: the settlement wallet the refund is
	// paid from, which must sign.
	Wallet        common.Address
	Authorization chain.TransferAuthorization
	// TypedData is the authorization as eth_signTypedData_v4 signs it.
	TypedData apitypes.TypedData
}

// LiveRefundTerms builds the authorization of the prepared live refund pr
// on r: from the payment's payee to its payer, for pr's amount, its nonce
// derived from pr's key (a refund has exactly one authorization), valid
// until validBefore (Unix seconds; 0: 24 hours from the latest block).
func LiveRefundTerms(ctx context.Context, r *chainrail.Rail, pr payments.PreparedRefund, validBefore uint64) (RefundTerms, error) {
	p := pr.Payment
	if p.Payee == nil || p.Payer == nil {
		return RefundTerms{}, apperr.Field("payment", "%s has no payer or payee on record", p.ID)
	}
	merchant, payer := common.HexToAddress(*p.Payee), common.HexToAddress(*p.Payer)
	a, _, err := r.Token().RefundAuthorization(ctx, merchant, payer, big.NewInt(int64(pr.Amount)), pr.Key, 0)
	if err != nil {
		return RefundTerms{}, err
	}
	if validBefore != 0 {
		a.ValidBefore = new(big.Int).SetUint64(validBefore)
	}
	dom, err := r.Token().Domain(ctx)
	if err != nil {
		return RefundTerms{}, err
	}
	return RefundTerms{Wallet: merchant, Authorization: a, TypedData: chain.TransferTypedData(dom, a)}, nil
}

// SignedRefund is the rail's payload of the live refund pr: the terms of
// validBefore (the one the wallet signed) carrying the wallet's signature
// (0x… hex). The rail verifies the signature against the settlement wallet
// when the refund is issued. A missing validBefore or an unreadable
// signature is invalid_request.
func SignedRefund(ctx context.Context, r *chainrail.Rail, pr payments.PreparedRefund, validBefore uint64, signature string) (*chainrail.Transfer, error) {
	if validBefore == 0 {
		return nil, apperr.Field("valid_before", "is required: the validBefore of the typed data that was signed")
	}
	sig, err := chain.ParseSignature(signature)
	if err != nil {
		msg := err.Error()
		if e, ok := apperr.As(err); ok {
			msg = e.Message
		}
		return nil, apperr.Field("signature", "%s", msg)
	}
	t, err := LiveRefundTerms(ctx, r, pr, validBefore)
	if err != nil {
		return nil, err
	}
	t.Authorization.Signature = sig
	return &chainrail.Transfer{Authorization: t.Authorization}, nil
}

// Refund issues the refund in on the rail of its payment's mode at
// clockOf's time (see payments.IssueRefund) and appends its audit entry,
// made by actor. A live refund needs in.Payload (SignedRefund) and in.Key
// (the prepared key it was signed for). The refund runs its own
// transaction and may reach the chain, so its entry follows it.
func Refund(ctx context.Context, db *store.DB, railFor func(tenant.Mode) (rail.Rail, bool), in payments.RefundInput,
	clockOf func(tenant.Scope) time.Time, actor audit.Actor) (payments.Refund, error) {
	r, err := payments.IssueRefund(ctx, db, railFor, in, clockOf)
	if err != nil {
		return r, err
	}
	return r, audit.Record(ctx, db, actor, audit.RefundEntry(r.MerchantID, r.Mode, r.ID, r.PaymentID, r.Amount.USDC(), r.Reason))
}

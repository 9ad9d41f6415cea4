package chain

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Expect is what an authorization must say to pay a given invoice (or
// refund).
type Expect struct {
	// From, when not zero, must be the authorizer (a refund's merchant
	// wallet). An invoice accepts any payer.
	From  common.Address
	To    common.Address
	Value *big.Int
	// Nonce, when not zero, must be the authorization's nonce
	// (NonceFor(invoice id)).
	Nonce common.Hash
	// NotAfter, when not zero, bounds validBefore (the invoice's expiry).
	NotAfter time.Time
	// MinValidity is how long the authorization must still be valid for
	// after the latest block, so it does not expire while the relayer's
	// transaction waits to be mined. Zero means 2 minutes.
	MinValidity time.Duration
	// Relayer is the address the simulation runs from.
	Relayer common.Address
}

// VerifyTransfer checks a signed authorization off-chain before the relayer
// pays gas for it: the signature is the payer's (ECDSA, or ERC-1271 for a
// smart-contract wallet), to, value, nonce and the validity window are what
// e expects, the nonce is unused, the payer's balance covers the value, and
// an eth_call of transferWithAuthorization succeeds. Times are the latest
// block's, as the token sees them.
//
// It returns a *Failure (authorization_mismatch, invalid_signature,
// authorization_used, authorization_expired, authorization_not_yet_valid,
// insufficient_funds, simulation_failed) when the payment cannot go through,
// and a plain error when the node could not be asked.
func VerifyTransfer(ctx context.Context, t *Token, a TransferAuthorization, e Expect) error {
	if a.ValidAfter == nil || a.ValidBefore == nil || len(a.Signature) == 0 {
		return fail(AuthorizationMismatch, "validAfter, validBefore and signature are required")
	}
	switch {
	case e.From != (common.Address{}) && a.From != e.From:
		return fail(AuthorizationMismatch, "from is %s, expected %s", a.From.Hex(), e.From.Hex())
	case a.To != e.To:
		return fail(AuthorizationMismatch, "to is %s, expected %s", a.To.Hex(), e.To.Hex())
	case a.Value == nil || e.Value == nil || a.Value.Cmp(e.Value) != 0:
		return fail(AuthorizationMismatch, "value is %v, expected %v", a.Value, e.Value)
	case e.Nonce != (common.Hash{}) && a.Nonce != e.Nonce:
		return fail(AuthorizationMismatch, "nonce is %s, expected %s", a.Nonce.Hex(), e.Nonce.Hex())
	case !e.NotAfter.IsZero() && a.ValidBefore.Cmp(big.NewInt(e.NotAfter.Unix())) > 0:
		return fail(AuthorizationMismatch, "validBefore %v is after the invoice expires (%d)", a.ValidBefore, e.NotAfter.Unix())
	}
	head, err := t.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("latest block: %w", err)
	}
	now := new(big.Int).SetUint64(head.Time)
	minValidity := e.MinValidity
	if minValidity == 0 {
		minValidity = 2 * time.Minute
	}
	if a.ValidAfter.Cmp(now) >= 0 {
		return fail(AuthorizationNotYet, "validAfter %v is not before the latest block's time %v", a.ValidAfter, now)
	}
	if a.ValidBefore.Cmp(new(big.Int).Add(now, big.NewInt(int64(minValidity/time.Second)))) <= 0 {
		return fail(AuthorizationExpired, "validBefore %v leaves less than %s after the latest block's time %v", a.ValidBefore, minValidity, now)
	}
	d, err := t.Domain(ctx)
	if err != nil {
		return err
	}
	digest, err := Digest(TransferTypedData(d, a))
	if err != nil {
		return err
	}
	if err := VerifySignature(ctx, t.b, a.From, digest, a.Signature); err != nil {
		return err
	}
	used, err := t.AuthorizationState(ctx, a.From, a.Nonce)
	if err != nil {
		return fmt.Errorf("authorizationState: %w", err)
	}
	if used {
		return fail(AuthorizationUsed, "nonce %s of %s is used or canceled", a.Nonce.Hex(), a.From.Hex())
	}
	bal, err := t.BalanceOf(ctx, a.From)
	if err != nil {
		return fmt.Errorf("balanceOf: %w", err)
	}
	if bal.Cmp(a.Value) < 0 {
		return fail(InsufficientFunds, "balance %v is below %v", bal, a.Value)
	}
	return simulate(ctx, t.b, e.Relayer, t.TransferCall(a))
}

// erc1271Magic is isValidSignature's success value.
var erc1271Magic = []byte{0x16, 0x26, 0xba, 0x7e}

// VerifySignature checks that signer signed digest: by ECDSA recovery when
// signer is an EOA, and by ERC-1271 isValidSignature through eth_call when
// it has code (a smart-contract wallet). It returns a *Failure
// (invalid_signature) when it did not, and a plain error when the node could
// not be asked.
func VerifySignature(ctx context.Context, b Backend, signer common.Address, digest common.Hash, sig []byte) error {
	code, err := b.CodeAt(ctx, signer, nil)
	if err != nil {
		return fmt.Errorf("code of %s: %w", signer, err)
	}
	if len(code) == 0 {
		got, err := Recover(digest, sig)
		if err != nil {
			return err
		}
		if got != signer {
			return fail(InvalidSignature, "signed by %s, not %s", got.Hex(), signer.Hex())
		}
		return nil
	}
	ok, err := IsValidSignature(ctx, b, signer, digest, sig)
	if err != nil {
		return err
	}
	if !ok {
		return fail(InvalidSignature, "wallet contract %s does not accept the signature (ERC-1271)", signer.Hex())
	}
	return nil
}

// IsValidSignature asks the contract wallet whether sig over digest is its
// own (ERC-1271). A revert or a wrong answer is false; only a failure to
// reach the node is an error.
func IsValidSignature(ctx context.Context, b Backend, wallet common.Address, digest common.Hash, sig []byte) (bool, error) {
	data := make([]byte, 0, 4+32*4+len(sig)+32)
	data = append(data, crypto.Keccak256([]byte("isValidSignature(bytes32,bytes)"))[:4]...)
	data = append(data, digest[:]...)
	data = append(data, common.LeftPadBytes(big.NewInt(64).Bytes(), 32)...)
	data = append(data, common.LeftPadBytes(big.NewInt(int64(len(sig))).Bytes(), 32)...)
	data = append(data, sig...)
	if pad := len(sig) % 32; pad != 0 {
		data = append(data, make([]byte, 32-pad)...)
	}
	out, err := b.CallContract(ctx, ethereum.CallMsg{To: &wallet, Data: data}, nil)
	if err != nil {
		if _, reverted := RevertReason(err); reverted || isExecutionError(err) {
			return false, nil
		}
		return false, fmt.Errorf("isValidSignature on %s: %w", wallet, err)
	}
	return len(out) >= 32 && bytes.Equal(out[:4], erc1271Magic), nil
}

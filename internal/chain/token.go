package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/tollgatehq/tollgate/internal/chain/contracts"
)

// Token is a USDC deployment (FiatTokenV2's interface; TestUSDC in tests).
type Token struct {
	Address common.Address
	b       Backend
	abi     *contracts.TestUSDC
	bound   *bind.BoundContract
}

// NewToken returns the token at addr. Nothing is read until a method runs.
func NewToken(b Backend, addr common.Address) *Token {
	c := contracts.NewTestUSDC()
	return &Token{Address: addr, b: b, abi: c, bound: c.Instance(b, addr)}
}

// Domain reads the token's EIP-712 domain from the chain: name() and
// version() from the contract and the chain id from the node. It is read
// each time (it is cheap, and a proxy upgrade may change the version).
func (t *Token) Domain(ctx context.Context) (Domain, error) {
	opts := &bind.CallOpts{Context: ctx}
	name, err := bind.Call(t.bound, opts, t.abi.PackName(), t.abi.UnpackName)
	if err != nil {
		return Domain{}, fmt.Errorf("token %s: name(): %w", t.Address, err)
	}
	version, err := bind.Call(t.bound, opts, t.abi.PackVersion(), t.abi.UnpackVersion)
	if err != nil {
		return Domain{}, fmt.Errorf("token %s: version(): %w", t.Address, err)
	}
	id, err := t.b.ChainID(ctx)
	if err != nil {
		return Domain{}, fmt.Errorf("chain id: %w", err)
	}
	return Domain{Name: name, Version: version, ChainID: id, VerifyingContract: t.Address}, nil
}

// BalanceOf returns owner's balance in base units.
func (t *Token) BalanceOf(ctx context.Context, owner common.Address) (*big.Int, error) {
	return bind.Call(t.bound, &bind.CallOpts{Context: ctx}, t.abi.PackBalanceOf(owner), t.abi.UnpackBalanceOf)
}

// Allowance returns what spender may pull from owner.
func (t *Token) Allowance(ctx context.Context, owner, spender common.Address) (*big.Int, error) {
	return bind.Call(t.bound, &bind.CallOpts{Context: ctx}, t.abi.PackAllowance(owner, spender), t.abi.UnpackAllowance)
}

// PermitNonce returns nonces(owner), the nonce the owner's next permit uses.
func (t *Token) PermitNonce(ctx context.Context, owner common.Address) (*big.Int, error) {
	return bind.Call(t.bound, &bind.CallOpts{Context: ctx}, t.abi.PackNonces(owner), t.abi.UnpackNonces)
}

// AuthorizationState reports whether authorizer's EIP-3009 nonce is used or
// canceled.
func (t *Token) AuthorizationState(ctx context.Context, authorizer common.Address, nonce common.Hash) (bool, error) {
	return bind.Call(t.bound, &bind.CallOpts{Context: ctx}, t.abi.PackAuthorizationState(authorizer, nonce), t.abi.UnpackAuthorizationState)
}

// TransferCall returns the relayer call that executes a: the (v, r, s) form,
// which every FiatTokenV2 has, for a 65-byte signature, and the bytes form
// (FiatTokenV2_2, ERC-1271 wallets) otherwise. The call expects the
// Transfer(from, to, value) log and names the authorization it uses.
func (t *Token) TransferCall(a TransferAuthorization) Call {
	var data []byte
	if len(a.Signature) == 65 {
		var r, s [32]byte
		copy(r[:], a.Signature[:32])
		copy(s[:], a.Signature[32:64])
		v := a.Signature[64]
		if v < 27 {
			v += 27
		}
		data = t.abi.PackTransferWithAuthorization0(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, v, r, s)
	} else {
		data = t.abi.PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, a.Signature)
	}
	return Call{
		To:            t.Address,
		Data:          data,
		Expect:        []Transfer{{Token: t.Address, From: a.From, To: a.To, Value: new(big.Int).Set(a.Value)}},
		Authorization: &AuthorizationRef{Token: t.Address, Authorizer: a.From, Nonce: a.Nonce},
	}
}

// PermitCall returns the relayer call that applies a signed EIP-2612
// permit (anyone may submit one): how a subscriber renews what the plan
// manager may draw without paying gas. The (v, r, s) form, which every
// FiatTokenV2 has, serves a 65-byte signature; the bytes form (ERC-1271
// wallets) any other.
func (t *Token) PermitCall(p Permit, sig []byte) Call {
	var data []byte
	if len(sig) == 65 {
		var r, s [32]byte
		copy(r[:], sig[:32])
		copy(s[:], sig[32:64])
		v := sig[64]
		if v < 27 {
			v += 27
		}
		data = t.abi.PackPermit0(p.Owner, p.Spender, p.Value, p.Deadline, v, r, s)
	} else {
		data = t.abi.PackPermit(p.Owner, p.Spender, p.Value, p.Deadline, sig)
	}
	return Call{To: t.Address, Data: data}
}

// RevertReason returns the revert string carried by an eth_call or
// eth_estimateGas error, if there is one.
func RevertReason(err error) (string, bool) {
	var de rpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok {
			if reason, err := abi.UnpackRevert(common.FromHex(s)); err == nil {
				return reason, true
			}
		}
	}
	// Some nodes only put the reason in the message.
	if err != nil {
		if _, after, ok := strings.Cut(err.Error(), "execution reverted: "); ok {
			return after, true
		}
	}
	return "", false
}

// simulate runs call from `from` with eth_call at the latest block and
// returns a Failure carrying the revert reason when it would revert.
func simulate(ctx context.Context, b Backend, from common.Address, c Call) error {
	_, err := b.CallContract(ctx, ethereum.CallMsg{From: from, To: &c.To, Data: c.Data}, nil)
	if err == nil {
		return nil
	}
	if reason, ok := RevertReason(err); ok {
		return ReasonFor(reason)
	}
	return fmt.Errorf("simulate call to %s: %w", c.To, err)
}

// ReasonFor maps a revert string of USDC or PlanManager to a Failure.
func ReasonFor(revert string) *Failure {
	r := SimulationFailed
	switch {
	case strings.Contains(revert, "exceeds balance"):
		r = InsufficientFunds
	case strings.Contains(revert, "authorization is used or canceled"):
		r = AuthorizationUsed
	case strings.Contains(revert, "authorization is expired"):
		r = AuthorizationExpired
	case strings.Contains(revert, "authorization is not yet valid"):
		r = AuthorizationNotYet
	case strings.Contains(revert, "invalid signature"):
		r = InvalidSignature
	case strings.Contains(revert, "cap exceeded"):
		r = CapExceeded
	case strings.Contains(revert, "plan revoked"):
		r = AuthorizationRevoked
	case strings.Contains(revert, "allowance"):
		// "allowance too low" / "allowance is zero" / "exceeds allowance":
		// the bounded permit is used up. A payer who drops it to zero on
		// purpose is seen by the watcher (the Approval), not here.
		r = AllowanceTooLow
	case strings.Contains(revert, "plan not active"):
		r = PlanNotActive
	case strings.Contains(revert, "plan not started"), strings.Contains(revert, "plan ended"):
		r = OutsideTerm
	}
	return &Failure{Reason: r, Detail: revert}
}

// isExecutionError reports whether err is the node saying the call reverted
// (with or without a reason), as opposed to not answering.
func isExecutionError(err error) bool {
	var de rpc.DataError
	return errors.As(err, &de) || strings.Contains(err.Error(), "execution reverted")
}

// Package chain is tollgate's on-chain settlement library: EIP-712 typed data
// for USDC's EIP-3009 transfer authorizations, EIP-2612 permits and
// PlanManager plans; off-chain verification of an authorization before the
// relayer spends gas on it; ERC-1271 smart-contract wallet signatures; and
// the PlanManager calls the live rail makes. Sub-packages relay and track
// transactions (relayer) and follow contract events (watch).
//
// Everything takes a Backend, which both *ethclient.Client and the simulated
// backend's client satisfy. Nothing here keeps package-level state.
package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// Backend is the JSON-RPC surface the library uses.
type Backend interface {
	bind.ContractBackend
	ethereum.ChainIDReader
	ethereum.BlockNumberReader
	ethereum.TransactionReader
	BalanceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (*big.Int, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
}

// The live rail's client.
var _ Backend = (*ethclient.Client)(nil)

// Transfer is an ERC-20 Transfer(from, to, value) log a settlement must
// produce.
type Transfer struct {
	Token common.Address `json:"token"`
	From  common.Address `json:"from"`
	To    common.Address `json:"to"`
	Value *big.Int       `json:"value"`
}

// AuthorizationRef names the EIP-3009 authorization a call consumes, so a
// revert saying it is already used can be reconciled against the chain's
// logs (someone else may have relayed it).
type AuthorizationRef struct {
	Token      common.Address `json:"token"`
	Authorizer common.Address `json:"authorizer"`
	Nonce      common.Hash    `json:"nonce"`
}

// Call is a contract call for the relayer to send and track: what to call,
// and what its success must look like.
type Call struct {
	To   common.Address
	Data []byte
	// Expect lists the Transfer logs the receipt must carry for the
	// settlement to count as confirmed.
	Expect []Transfer
	// Authorization, when set, is the EIP-3009 authorization the call uses.
	Authorization *AuthorizationRef
}

// Reason says why a payment cannot go through, in the rail's vocabulary (the
// daemon answers 402 payment_failed naming it).
type Reason string

// Reasons a Failure carries.
const (
	InsufficientFunds     Reason = "insufficient_funds"
	InvalidSignature      Reason = "invalid_signature"
	AuthorizationUsed     Reason = "authorization_used"
	AuthorizationExpired  Reason = "authorization_expired"
	AuthorizationNotYet   Reason = "authorization_not_yet_valid"
	AuthorizationMismatch Reason = "authorization_mismatch"
	AuthorizationCanceled Reason = "authorization_canceled"
	AuthorizationRevoked  Reason = "authorization_revoked"
	// AllowanceTooLow: the payer's permit to the plan manager is used up
	// (or was never applied). Unlike a revocation the payer can renew it.
	AllowanceTooLow     Reason = "allowance_too_low"
	CapExceeded         Reason = "cap_exceeded"
	PlanNotActive       Reason = "plan_not_active"
	OutsideTerm         Reason = "outside_term"
	SimulationFailed    Reason = "simulation_failed"
	TransactionReverted Reason = "transaction_reverted"
	// NonceTaken: the relayer's nonce was used by a transaction tollgate
	// did not store (the key is shared with another program).
	NonceTaken Reason = "nonce_taken"
	// TransferMissing: the transaction succeeded without the expected
	// Transfer log (the token is not what it claims).
	TransferMissing Reason = "transfer_missing"
)

// Failure is a payment that the chain would refuse (or did refuse). It is
// not retryable as is: the payer or merchant has to act.
type Failure struct {
	Reason Reason
	// Detail is for logs and the error message: the revert string, the
	// mismatching field.
	Detail string
}

func (f *Failure) Error() string {
	if f.Detail == "" {
		return string(f.Reason)
	}
	return string(f.Reason) + ": " + f.Detail
}

func fail(r Reason, format string, args ...any) *Failure {
	return &Failure{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// NonceFor returns the EIP-3009 nonce tollgate uses for an object: the
// keccak256 of its id, so an invoice (or refund) has exactly one
// authorization.
func NonceFor(id string) common.Hash {
	return crypto.Keccak256Hash([]byte(id))
}

package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/chain/contracts"
)

// Plan is what a payer signs to subscribe: the operator may move at most
// CapPerPeriod of Token from Payer to Payee in each Period (seconds) of
// [Start, End) (unix seconds), until the payer revokes it. Salt makes two
// otherwise equal plans distinct (tollgate uses NonceFor(subscription id)).
type Plan struct {
	Payer        common.Address
	Payee        common.Address
	Token        common.Address
	CapPerPeriod *big.Int
	Period       *big.Int
	Start        *big.Int
	End          *big.Int
	Salt         common.Hash
}

func (p Plan) binding() contracts.PlanManagerPlan {
	return contracts.PlanManagerPlan{
		Payer: p.Payer, Payee: p.Payee, Token: p.Token,
		CapPerPeriod: p.CapPerPeriod, Period: p.Period, Start: p.Start, End: p.End, Salt: p.Salt,
	}
}

// PlanTypedData returns the typed data the payer signs for p in the
// PlanManager's domain d (see PlanManager.Domain).
func PlanTypedData(d Domain, p Plan) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": domainType,
			"Plan": {
				{Name: "payer", Type: "address"},
				{Name: "payee", Type: "address"},
				{Name: "token", Type: "address"},
				{Name: "capPerPeriod", Type: "uint256"},
				{Name: "period", Type: "uint256"},
				{Name: "start", Type: "uint256"},
				{Name: "end", Type: "uint256"},
				{Name: "salt", Type: "bytes32"},
			},
		},
		PrimaryType: "Plan",
		Domain:      d.typed(),
		Message: apitypes.TypedDataMessage{
			"payer":        p.Payer.Hex(),
			"payee":        p.Payee.Hex(),
			"token":        p.Token.Hex(),
			"capPerPeriod": p.CapPerPeriod.String(),
			"period":       p.Period.String(),
			"start":        p.Start.String(),
			"end":          p.End.String(),
			"salt":         p.Salt.Hex(),
		},
	}
}

// RevokeTypedData returns the typed data a payer signs to revoke plan id
// without gas (PlanManager.revokeWithSignature), valid until deadline.
func RevokeTypedData(d Domain, id common.Hash, deadline *big.Int) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": domainType,
			"Revoke": {
				{Name: "planId", Type: "bytes32"},
				{Name: "deadline", Type: "uint256"},
			},
		},
		PrimaryType: "Revoke",
		Domain:      d.typed(),
		Message:     apitypes.TypedDataMessage{"planId": id.Hex(), "deadline": deadline.String()},
	}
}

// SignedPermit is an EIP-2612 permit with its signature, as activate takes
// it. A zero Deadline means none (the payer approved the contract directly).
type SignedPermit struct {
	Value     *big.Int
	Deadline  *big.Int
	Signature []byte
}

// PlanStatus is a plan's state on chain.
type PlanStatus uint8

// Statuses as PlanManager numbers them.
const (
	PlanNone PlanStatus = iota
	PlanActive
	PlanRevoked
)

// PlanState is PlanManager's record of a plan, plus what charge would
// accept now.
type PlanState struct {
	Status      PlanStatus
	PeriodIndex uint64
	// Spent is what was charged in period PeriodIndex.
	Spent     *big.Int
	Remaining *big.Int
}

// PlanManager is a deployed PlanManager contract.
type PlanManager struct {
	Address common.Address
	b       Backend
	abi     *contracts.PlanManager
	bound   *bind.BoundContract
}

// NewPlanManager returns the contract at addr.
func NewPlanManager(b Backend, addr common.Address) *PlanManager {
	c := contracts.NewPlanManager()
	return &PlanManager{Address: addr, b: b, abi: c, bound: c.Instance(b, addr)}
}

// Domain reads the contract's EIP-712 domain (EIP-5267 eip712Domain()).
func (m *PlanManager) Domain(ctx context.Context) (Domain, error) {
	out, err := bind.Call(m.bound, &bind.CallOpts{Context: ctx}, m.abi.PackEip712Domain(), m.abi.UnpackEip712Domain)
	if err != nil {
		return Domain{}, fmt.Errorf("plan manager %s: eip712Domain(): %w", m.Address, err)
	}
	return Domain{Name: out.Name, Version: out.Version, ChainID: out.ChainId, VerifyingContract: out.VerifyingContract}, nil
}

// PlanID returns the plan's id: its EIP-712 digest in the contract's domain.
func (m *PlanManager) PlanID(ctx context.Context, p Plan) (common.Hash, error) {
	d, err := m.Domain(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	return Digest(PlanTypedData(d, p))
}

// State returns the plan's on-chain state.
func (m *PlanManager) State(ctx context.Context, p Plan) (PlanState, error) {
	opts := &bind.CallOpts{Context: ctx}
	id, err := bind.Call(m.bound, opts, m.abi.PackPlanId(p.binding()), m.abi.UnpackPlanId)
	if err != nil {
		return PlanState{}, fmt.Errorf("planId: %w", err)
	}
	st, err := bind.Call(m.bound, opts, m.abi.PackPlanState(id), m.abi.UnpackPlanState)
	if err != nil {
		return PlanState{}, fmt.Errorf("planState: %w", err)
	}
	rem, err := bind.Call(m.bound, opts, m.abi.PackRemaining(p.binding()), m.abi.UnpackRemaining)
	if err != nil {
		return PlanState{}, fmt.Errorf("remaining: %w", err)
	}
	return PlanState{Status: PlanStatus(st.Status), PeriodIndex: st.PeriodIndex, Spent: st.Spent, Remaining: rem}, nil
}

// ActivateCall returns the relayer call that records p with the payer's
// signature, applies the permit and pulls firstCharge (zero for a metered
// plan, which only authorizes). ref tags the PlanCharged event
// (NonceFor(payment id)).
func (m *PlanManager) ActivateCall(p Plan, signature []byte, permit SignedPermit, firstCharge *big.Int, ref common.Hash) Call {
	var bp contracts.PlanManagerPermit
	bp.Value, bp.Deadline = new(big.Int), new(big.Int)
	if permit.Deadline != nil && permit.Deadline.Sign() > 0 && len(permit.Signature) == 65 {
		bp.Value, bp.Deadline = permit.Value, permit.Deadline
		copy(bp.R[:], permit.Signature[:32])
		copy(bp.S[:], permit.Signature[32:64])
		bp.V = permit.Signature[64]
		if bp.V < 27 {
			bp.V += 27
		}
	}
	if firstCharge == nil {
		firstCharge = new(big.Int)
	}
	c := Call{To: m.Address, Data: m.abi.PackActivate(p.binding(), signature, bp, firstCharge, ref)}
	if firstCharge.Sign() > 0 {
		c.Expect = []Transfer{{Token: p.Token, From: p.Payer, To: p.Payee, Value: new(big.Int).Set(firstCharge)}}
	}
	return c
}

// ChargeCall returns the relayer call that pulls amount for the current
// period.
func (m *PlanManager) ChargeCall(p Plan, amount *big.Int, ref common.Hash) Call {
	return Call{
		To:     m.Address,
		Data:   m.abi.PackCharge(p.binding(), amount, ref),
		Expect: []Transfer{{Token: p.Token, From: p.Payer, To: p.Payee, Value: new(big.Int).Set(amount)}},
	}
}

// RevokeCall returns the relayer call that submits the payer's gasless
// revocation.
func (m *PlanManager) RevokeCall(p Plan, deadline *big.Int, signature []byte) Call {
	return Call{To: m.Address, Data: m.abi.PackRevokeWithSignature(p.binding(), deadline, signature)}
}

// Preflight runs c with eth_call from the operator and returns a *Failure
// (cap_exceeded, authorization_revoked, plan_not_active, outside_term,
// insufficient_funds, invalid_signature, simulation_failed) when the
// contract would refuse it, so a doomed charge costs no gas.
func (m *PlanManager) Preflight(ctx context.Context, operator common.Address, c Call) error {
	return simulate(ctx, m.b, operator, c)
}

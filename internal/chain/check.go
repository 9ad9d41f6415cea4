package chain

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Separator is the EIP-712 domain separator of d, as a contract's
// DOMAIN_SEPARATOR() returns it.
func (d Domain) Separator() (common.Hash, error) {
	td := apitypes.TypedData{Types: apitypes.Types{"EIP712Domain": domainType}, Domain: d.typed()}
	h, err := td.HashStruct("EIP712Domain", td.Domain.Map())
	if err != nil {
		return common.Hash{}, err
	}
	return common.BytesToHash(h), nil
}

// Check makes sure the contract at t.Address is a USDC as tollgate uses it,
// before any payer signs for it: code at the address, 6 decimals, and a
// DOMAIN_SEPARATOR() equal to the separator of the domain tollgate builds
// from name(), version() and the chain id (what payers sign is then what
// the token verifies). Its error is one line saying what is wrong.
func (t *Token) Check(ctx context.Context) (Domain, error) {
	if err := hasCode(ctx, t.b, t.Address); err != nil {
		return Domain{}, err
	}
	d, err := t.Domain(ctx)
	if err != nil {
		return Domain{}, err
	}
	opts := &bind.CallOpts{Context: ctx}
	dec, err := bind.Call(t.bound, opts, t.abi.PackDecimals(), t.abi.UnpackDecimals)
	if err != nil {
		return Domain{}, fmt.Errorf("decimals(): %v", err)
	}
	if dec != 6 {
		return Domain{}, fmt.Errorf("it has %d decimals, not USDC's 6", dec)
	}
	got, err := bind.Call(t.bound, opts, t.abi.PackDOMAINSEPARATOR(), t.abi.UnpackDOMAINSEPARATOR)
	if err != nil {
		return Domain{}, fmt.Errorf("DOMAIN_SEPARATOR(): %v", err)
	}
	want, err := d.Separator()
	if err != nil {
		return Domain{}, err
	}
	if got != want {
		return Domain{}, fmt.Errorf("its DOMAIN_SEPARATOR() is not the EIP-712 domain {name %q, version %q, chain %s, contract %s}",
			d.Name, d.Version, d.ChainID, d.VerifyingContract.Hex())
	}
	return d, nil
}

// PlanManagerName and PlanManagerVersion are the EIP-712 domain the
// PlanManager tollgate deploys declares.
const (
	PlanManagerName    = "PlanManager"
	PlanManagerVersion = "1"
)

// Check makes sure the contract at m.Address is a PlanManager this relayer
// can run: code at the address, an eip712Domain() of PlanManager version 1
// on this chain at this address, and operator as its operator (only the
// operator may activate and charge plans). Its error is one line.
func (m *PlanManager) Check(ctx context.Context, operator common.Address) error {
	if err := hasCode(ctx, m.b, m.Address); err != nil {
		return err
	}
	d, err := m.Domain(ctx)
	if err != nil {
		return fmt.Errorf("eip712Domain() failed (%v): it is not a PlanManager", err)
	}
	id, err := m.b.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("chain id: %w", err)
	}
	switch {
	case d.Name != PlanManagerName || d.Version != PlanManagerVersion:
		return fmt.Errorf("its EIP-712 domain is %q version %q, not %q version %q", d.Name, d.Version, PlanManagerName, PlanManagerVersion)
	case d.ChainID == nil || d.ChainID.Cmp(id) != 0 || d.VerifyingContract != m.Address:
		return fmt.Errorf("its EIP-712 domain names chain %v and contract %s, not chain %s and itself", d.ChainID, d.VerifyingContract.Hex(), id)
	}
	op, err := bind.Call(m.bound, &bind.CallOpts{Context: ctx}, m.abi.PackOperator(), m.abi.UnpackOperator)
	if err != nil {
		return fmt.Errorf("operator(): %v", err)
	}
	if op != operator {
		return fmt.Errorf("its operator is %s, not the relayer %s (deploy one with this relayer key, or have the operator call setOperator)", op.Hex(), operator.Hex())
	}
	return nil
}

func hasCode(ctx context.Context, b Backend, a common.Address) error {
	code, err := b.CodeAt(ctx, a, nil)
	if err != nil {
		return fmt.Errorf("code of %s: %w", a.Hex(), err)
	}
	if len(code) == 0 {
		return fmt.Errorf("no contract there (no code at %s on this chain)", a.Hex())
	}
	return nil
}

package chainrail

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/relayer"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// What a subscriber does on chain without gas, the relayer sending it:
// revoke the plan (PlanManager.revokeWithSignature) or renew the permit
// that lets the plan manager draw (EIP-2612). Neither is a settlement of
// the money path: a revocation reaches the subscription through the
// watcher (PlanRevoked), and a renewed permit lets the next charge or
// dunning retry through.

// revocationValidity is how long a revocation the page asks for may wait
// to be submitted.
const revocationValidity = 3600

// Revocation is what a subscriber signs to revoke a plan, and how it
// stands once submitted.
type Revocation struct {
	Plan   chain.Plan
	PlanID common.Hash
	// TypedData is what the wallet signs: Revoke(planId, deadline) in the
	// plan manager's domain.
	TypedData apitypes.TypedData
	Deadline  *big.Int
}

// activation returns the activation stored under key in s, with its plan.
func (r *Rail) activation(ctx context.Context, s tenant.Scope, key string) (row, chain.Plan, error) {
	if r.plans == nil {
		return row{}, chain.Plan{}, noPlanManager()
	}
	w, err := r.get(ctx, r.db, s, key)
	if err != nil {
		return row{}, chain.Plan{}, err
	}
	if w == nil || w.Kind != rail.Activate || len(w.Plan) == 0 {
		return row{}, chain.Plan{}, apperr.New(apperr.ResourceNotFound, "no on-chain plan behind this subscription")
	}
	var p chain.Plan
	if err := json.Unmarshal(w.Plan, &p); err != nil {
		return row{}, chain.Plan{}, fmt.Errorf("chainrail: stored plan of %s: %w", key, err)
	}
	return *w, p, nil
}

// RevocationTerms returns the Revoke the payer of the activation under key
// signs, valid an hour from the latest block. It fails with
// resource_not_found when there is no such activation.
func (r *Rail) RevocationTerms(ctx context.Context, s tenant.Scope, key string) (Revocation, error) {
	_, p, err := r.activation(ctx, s, key)
	if err != nil {
		return Revocation{}, err
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return Revocation{}, fmt.Errorf("latest block: %w", err)
	}
	return r.revocation(ctx, p, new(big.Int).SetUint64(head.Time+revocationValidity))
}

func (r *Rail) revocation(ctx context.Context, p chain.Plan, deadline *big.Int) (Revocation, error) {
	d, err := r.plans.Domain(ctx)
	if err != nil {
		return Revocation{}, err
	}
	id, err := chain.Digest(chain.PlanTypedData(d, p))
	if err != nil {
		return Revocation{}, err
	}
	return Revocation{Plan: p, PlanID: id, TypedData: chain.RevokeTypedData(d, id, deadline), Deadline: deadline}, nil
}

// Revoke verifies the payer's signed Revoke of the activation under key
// and has the relayer submit it: the payer pays no gas. It answers the
// relayer's state (pending until mined); submitting the same revocation
// again answers the first. It fails with invalid_request naming
// `signature` when the signature is not the payer's or `deadline` when it
// has passed (no gas is spent on either), and with a *chain.Failure
// (authorization_revoked) when the plan is revoked already.
func (r *Rail) Revoke(ctx context.Context, s tenant.Scope, key string, deadline *big.Int, sig []byte) (relayer.Settlement, error) {
	_, p, err := r.activation(ctx, s, key)
	if err != nil {
		return relayer.Settlement{}, err
	}
	rv, err := r.revocation(ctx, p, deadline)
	if err != nil {
		return relayer.Settlement{}, err
	}
	digest, err := chain.Digest(rv.TypedData)
	if err != nil {
		return relayer.Settlement{}, err
	}
	if err := r.checkSigned(ctx, p.Payer, digest, sig, deadline); err != nil {
		return relayer.Settlement{}, err
	}
	call := r.plans.RevokeCall(p, deadline, sig)
	st, err := r.relayer.Submit(ctx, relayerKey(s, RevocationKey(key, deadline)), call)
	if err != nil {
		return relayer.Settlement{}, err
	}
	r.log.Info("revocation submitted", "authorization", key, "payer", p.Payer)
	return st, nil
}

// PermitRenewal is a renewed permit a subscriber posts.
type PermitRenewal struct {
	Value, Deadline *big.Int
	Signature       []byte
}

// RenewPermit verifies the payer's signed permit for the plan manager, as
// PermitTerms offered it (the payer's current permit nonce, a value of at
// most the allowance left plus PermitPeriods caps), and has the relayer
// submit it. It answers the relayer's state; the same permit posted again
// answers the first submission.
func (r *Rail) RenewPermit(ctx context.Context, s tenant.Scope, key string, capPerPeriod *big.Int, in PermitRenewal) (relayer.Settlement, error) {
	_, p, err := r.activation(ctx, s, key)
	if err != nil {
		return relayer.Settlement{}, err
	}
	nonce, err := r.token.PermitNonce(ctx, p.Payer)
	if err != nil {
		return relayer.Settlement{}, fmt.Errorf("permit nonce: %w", err)
	}
	allowance, err := r.token.Allowance(ctx, p.Payer, r.plans.Address)
	if err != nil {
		return relayer.Settlement{}, fmt.Errorf("allowance: %w", err)
	}
	most := new(big.Int).Add(allowance, new(big.Int).Mul(capPerPeriod, new(big.Int).SetUint64(r.periods)))
	if in.Value == nil || in.Value.Sign() <= 0 || in.Value.Cmp(most) > 0 {
		return relayer.Settlement{}, apperr.Field("value", "must be positive and at most %s (the allowance left plus %d periods' caps)", most, r.periods)
	}
	d, err := r.token.Domain(ctx)
	if err != nil {
		return relayer.Settlement{}, err
	}
	permit := chain.Permit{Owner: p.Payer, Spender: r.plans.Address, Value: in.Value, Nonce: nonce, Deadline: in.Deadline}
	digest, err := chain.Digest(chain.PermitTypedData(d, permit))
	if err != nil {
		return relayer.Settlement{}, err
	}
	if err := r.checkSigned(ctx, p.Payer, digest, in.Signature, in.Deadline); err != nil {
		return relayer.Settlement{}, err
	}
	// One transaction per signed permit: a permit that reverted (its
	// deadline passed on the way) leaves the nonce to the next one.
	st, err := r.relayer.Submit(ctx, relayerKey(s, fmt.Sprintf("permit:%s:%s:%s", key, nonce, in.Deadline)), r.token.PermitCall(permit, in.Signature))
	if err != nil {
		return relayer.Settlement{}, err
	}
	r.log.Info("permit renewal submitted", "authorization", key, "payer", p.Payer, "value", in.Value)
	return st, nil
}

// checkSigned checks a customer's signature and deadline off-chain, so a
// wrong one costs no gas: invalid_request naming the field.
func (r *Rail) checkSigned(ctx context.Context, signer common.Address, digest common.Hash, sig []byte, deadline *big.Int) error {
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("latest block: %w", err)
	}
	if deadline == nil || deadline.Cmp(new(big.Int).SetUint64(head.Time)) <= 0 {
		return apperr.Field("deadline", "has passed (the latest block's time is %d): sign again", head.Time)
	}
	err = chain.VerifySignature(ctx, r.b, signer, digest, sig)
	if f := asFailure(err); f != nil {
		return apperr.Field("signature", "is not %s's signature over the typed data served: %s", signer.Hex(), f.Detail)
	}
	return err
}

// PlanStanding is how a subscriber's authorization stands on chain.
type PlanStanding struct {
	Payer     common.Address
	Revoked   bool
	Allowance *big.Int
	// LastFailure is the reason the newest charge of the authorization
	// failed for ("" when it did not fail).
	LastFailure string
}

// Standing reads the plan behind the activation under key: whether it is
// revoked, what the payer still allows the plan manager, and why its last
// charge failed, if it did.
func (r *Rail) Standing(ctx context.Context, s tenant.Scope, key string) (PlanStanding, error) {
	_, p, err := r.activation(ctx, s, key)
	if err != nil {
		return PlanStanding{}, err
	}
	st, err := r.plans.State(ctx, p)
	if err != nil {
		return PlanStanding{}, err
	}
	allowance, err := r.token.Allowance(ctx, p.Payer, r.plans.Address)
	if err != nil {
		return PlanStanding{}, fmt.Errorf("allowance: %w", err)
	}
	out := PlanStanding{Payer: p.Payer, Revoked: st.Status == chain.PlanRevoked, Allowance: allowance}
	var ws []row
	if err := r.db.SelectContext(ctx, &ws, `SELECT `+rowColumns+` FROM chain_settlements WHERE merchant_id = $1 AND mode = $2
		AND kind = 'charge' AND nonce = $3 ORDER BY requested_at DESC LIMIT 1`, s.MerchantID, s.Mode, key); err != nil {
		return PlanStanding{}, err
	}
	if len(ws) == 1 && ws[0].Status == rail.Failed {
		out.LastFailure = strings.TrimSpace(ws[0].Reason.String)
	}
	return out, nil
}

// RevocationKey names the revocation of the activation under key signed
// with deadline: each signed revocation is its own transaction, so one
// that reverted (its deadline passed before it was mined) leaves the way
// open to the next.
func RevocationKey(key string, deadline *big.Int) string {
	return "revoke:" + key + ":" + deadline.String()
}

// CustomerState is a customer's own submission under key (RevocationKey)
// as the relayer has it: pending, mined, confirmed, reverted or failed;
// ok=false when there is none.
func (r *Rail) CustomerState(ctx context.Context, s tenant.Scope, key string) (relayer.Settlement, bool, error) {
	st, err := r.relayer.Status(ctx, relayerKey(s, key))
	if apperr.CodeOf(err) == apperr.ResourceNotFound {
		return relayer.Settlement{}, false, nil
	}
	return st, err == nil, err
}

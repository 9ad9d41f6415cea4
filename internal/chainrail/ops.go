package chainrail

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// transferPayload reads a Pay or Refund payload.
func transferPayload(req rail.Request) (Transfer, error) {
	switch p := req.Payload.(type) {
	case *Transfer:
		return *p, nil
	case Transfer:
		return p, nil
	}
	return Transfer{}, apperr.New(apperr.InvalidRequest, "a live %s needs a signed transfer authorization", req.Kind)
}

// pay verifies the payer's authorization against the invoice (to the
// payee, exactly the amount, the invoice's nonce, unused, funded, and a
// successful simulation), stores the operation and submits it.
func (r *Rail) pay(ctx context.Context, req rail.Request) (rail.Settlement, error) {
	p, err := transferPayload(req)
	if err != nil {
		return rail.Settlement{}, err
	}
	a := p.Authorization
	if !strings.EqualFold(a.From.Hex(), req.Payer) {
		return rail.Settlement{}, apperr.Field("from", "the authorization is from %s, not the payer %s", a.From.Hex(), req.Payer)
	}
	err = chain.VerifyTransfer(ctx, r.token, a, chain.Expect{To: common.HexToAddress(req.Payee), Value: amount(req.Amount),
		Nonce: chain.NonceFor(req.Nonce), NotAfter: p.NotAfter, Relayer: r.relayer.Address()})
	if f := asFailure(err); f != nil {
		return r.refused(req, f), nil
	}
	if err != nil {
		return rail.Settlement{}, err
	}
	return r.submit(ctx, newRow(req), r.token.TransferCall(a), true)
}

// submit stores w (or finds the row that stands) and sends call under its
// relayer key. A refusal at the relayer's preflight is a failed settlement:
// forgotten when forgettable (the payer may try again), stored otherwise.
func (r *Rail) submit(ctx context.Context, w row, call chain.Call, forgettable bool) (rail.Settlement, error) {
	stood, err := r.insert(ctx, w)
	if err != nil {
		return rail.Settlement{}, err
	}
	if stood.Key != w.Key || stood.Status != rail.Pending {
		return r.answer(ctx, stood)
	}
	s, err := r.relayer.Submit(ctx, w.RelayerKey, call)
	if f := asFailure(err); f != nil {
		if forgettable {
			if err := r.forget(ctx, w); err != nil {
				return rail.Settlement{}, err
			}
			st := r.settlement(stood)
			st.Status, st.Reason = rail.Failed, string(f.Reason)
			return st, nil
		}
		return r.finish(ctx, stood, rail.Failed, string(f.Reason), common.Hash{})
	}
	if err != nil {
		return rail.Settlement{}, err
	}
	attrs := []any{"key", w.Key, "kind", w.Kind, "amount", w.Amount}
	if s.Nonce != nil { // nil when it tracks someone else's transaction
		attrs = append(attrs, "nonce", *s.Nonce)
	}
	r.log.Info("settlement submitted", attrs...)
	return r.answer(ctx, stood)
}

// activate records the payer's plan with its permit and, for a licensed
// plan, pulls the first period's charge (req.Amount) in the same call.
func (r *Rail) activate(ctx context.Context, req rail.Request) (rail.Settlement, error) {
	if r.plans == nil {
		return rail.Settlement{}, apperr.New(apperr.PaymentFailed, "subscriptions cannot be paid: no plan manager contract is configured (serve --plan-manager-address)")
	}
	var p Activation
	switch v := req.Payload.(type) {
	case *Activation:
		p = *v
	case Activation:
		p = v
	default:
		return rail.Settlement{}, apperr.New(apperr.InvalidRequest, "a live activation needs the payer's signed plan")
	}
	plan := p.Plan
	switch {
	case !strings.EqualFold(plan.Payer.Hex(), req.Payer):
		return rail.Settlement{}, apperr.Field("plan.payer", "is %s, not the payer %s", plan.Payer.Hex(), req.Payer)
	case !strings.EqualFold(plan.Payee.Hex(), req.Payee):
		return rail.Settlement{}, apperr.Field("plan.payee", "is %s, not the merchant's wallet %s", plan.Payee.Hex(), req.Payee)
	case plan.Token != r.token.Address:
		return rail.Settlement{}, apperr.Field("plan.token", "is %s, not the configured USDC %s", plan.Token.Hex(), r.token.Address.Hex())
	case plan.CapPerPeriod == nil || plan.CapPerPeriod.Cmp(amount(req.Amount)) < 0:
		return rail.Settlement{}, apperr.Field("plan.capPerPeriod", "is below the first charge %s", req.Amount)
	}
	id, err := r.plans.PlanID(ctx, plan)
	if err != nil {
		return rail.Settlement{}, err
	}
	err = chain.VerifySignature(ctx, r.b, plan.Payer, id, p.Signature)
	if f := asFailure(err); f != nil {
		return r.refused(req, f), nil
	}
	if err != nil {
		return rail.Settlement{}, err
	}
	w := newRow(req)
	w.Subject = marshal(subject{PlanID: p.PlanID, CustomerID: p.CustomerID, CouponID: p.CouponID, PlanChange: p.Change})
	w.Plan = marshal(plan)
	w.PlanID.String, w.PlanID.Valid = strings.ToLower(id.Hex()), true
	call := r.plans.ActivateCall(plan, p.Signature, p.Permit, amount(req.Amount), chain.NonceFor(req.Key))
	return r.submit(ctx, w, call, true)
}

// charge pulls a period's amount on the plan the activation (req.Nonce)
// recorded. The contract refuses above the cap, outside the term and after
// a revocation; the preflight finds that before any gas is spent.
func (r *Rail) charge(ctx context.Context, req rail.Request) (rail.Settlement, error) {
	if r.plans == nil {
		return rail.Settlement{}, fmt.Errorf("chainrail: a charge of %s without a plan manager configured", req.Nonce)
	}
	act, err := r.get(ctx, r.db, req.Scope, req.Nonce)
	if err != nil {
		return rail.Settlement{}, err
	}
	if act == nil || act.Kind != rail.Activate || len(act.Plan) == 0 {
		return rail.Settlement{}, fmt.Errorf("chainrail: charge %s draws on unknown authorization %q", req.Key, req.Nonce)
	}
	var plan chain.Plan
	if err := json.Unmarshal(act.Plan, &plan); err != nil {
		return rail.Settlement{}, fmt.Errorf("chainrail: stored plan of %s: %w", req.Nonce, err)
	}
	w := newRow(req)
	w.Payer, w.Payee = act.Payer, act.Payee
	return r.submit(ctx, w, r.plans.ChargeCall(plan, amount(req.Amount), chain.NonceFor(req.Key)), false)
}

// refund sends the merchant wallet's authorization back to the payer. The
// request's Payer is the merchant's wallet (the refunded payment's payee).
func (r *Rail) refund(ctx context.Context, req rail.Request) (rail.Settlement, error) {
	p, err := transferPayload(req)
	if err != nil {
		return rail.Settlement{}, err
	}
	a := p.Authorization
	err = chain.VerifyTransfer(ctx, r.token, a, chain.Expect{From: common.HexToAddress(req.Payer), To: common.HexToAddress(req.Payee),
		Value: amount(req.Amount), Nonce: chain.NonceFor(req.Key), Relayer: r.relayer.Address()})
	if f := asFailure(err); f != nil {
		return r.refused(req, f), nil
	}
	if err != nil {
		return rail.Settlement{}, err
	}
	return r.submit(ctx, newRow(req), r.token.TransferCall(a), true)
}

package chainrail

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/money"
)

// InvoiceValidity is how long an invoice authorization the checkout page
// asks for stays valid.
const InvoiceValidity = time.Hour

// InvoiceAuthorization returns the unsigned authorization a payer signs to
// pay an invoice: amount from payer to payee, nonce NonceFor(invoice id),
// valid from now (the latest block's time) for InvoiceValidity. It returns
// the typed data for eth_signTypedData_v4 with it. It fails when the node
// cannot be asked.
func (r *Rail) InvoiceAuthorization(ctx context.Context, payer, payee common.Address, a money.Amount, invoiceID string) (chain.TransferAuthorization, apitypes.TypedData, error) {
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return chain.TransferAuthorization{}, apitypes.TypedData{}, fmt.Errorf("latest block: %w", err)
	}
	d, err := r.token.Domain(ctx)
	if err != nil {
		return chain.TransferAuthorization{}, apitypes.TypedData{}, err
	}
	auth := chain.TransferAuthorization{From: payer, To: payee, Value: amount(a), ValidAfter: new(big.Int),
		ValidBefore: new(big.Int).SetUint64(head.Time + uint64(InvoiceValidity/time.Second)), Nonce: chain.NonceFor(invoiceID)}
	return auth, chain.TransferTypedData(d, auth), nil
}

// PeriodSeconds is the on-chain period of a plan interval: fixed seconds,
// with calendar months as 28 days and years as 365, the shortest each can
// be, so a renewal never falls in a contract period already charged.
func PeriodSeconds(interval string, intervalDays *int) (uint64, error) {
	const day = 24 * 60 * 60
	switch interval {
	case "week":
		return 7 * day, nil
	case "biweekly":
		return 14 * day, nil
	case "month":
		return 28 * day, nil
	case "year":
		return 365 * day, nil
	case "custom":
		if intervalDays != nil && *intervalDays > 0 {
			return uint64(*intervalDays) * day, nil
		}
	}
	return 0, fmt.Errorf("chainrail: no on-chain period for interval %q", interval)
}

// PlanTerms is what a plan's checkout asks the payer to sign.
type PlanTerms struct {
	Plan   chain.Plan
	Permit chain.Permit
	// PlanTypedData and PermitTypedData are what the wallet signs.
	PlanTypedData, PermitTypedData apitypes.TypedData
	// Periods is how many periods' caps the permit adds to Allowance, the
	// plan manager's allowance before it.
	Periods   uint64
	Allowance *big.Int
}

// openEnded is a plan's end when the subscription has none (uint64's
// largest value: far past any block time).
var openEnded = new(big.Int).SetUint64(^uint64(0))

// permitValidity is how long a permit the checkout asks for may wait to be
// submitted.
const permitValidity = 3600

// PlanTerms returns the plan the payer signs to subscribe (cap per period,
// period, start now, no end, a random salt) and the EIP-2612 permit that
// lets the plan manager pull from the payer. The permit is bounded: what
// the payer already allows the plan manager plus PermitPeriods times the
// cap (a permit sets the allowance, so adding keeps the payer's other
// subscriptions drawing), valid an hour; when it runs low a renewal fails
// with allowance_too_low and the payer renews it (PermitTerms). It fails
// with payment_failed when no plan manager is configured, and with a plain
// error when the node cannot be asked.
func (r *Rail) PlanTerms(ctx context.Context, payer, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64) (PlanTerms, error) {
	return r.planTerms(ctx, payer, payee, capPerPeriod, periodSeconds, func(head uint64) uint64 { return head })
}

// planTerms is PlanTerms with the plan's start chosen from the latest
// block's time.
func (r *Rail) planTerms(ctx context.Context, payer, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64,
	start func(head uint64) uint64) (PlanTerms, error) {
	if r.plans == nil {
		return PlanTerms{}, noPlanManager()
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return PlanTerms{}, fmt.Errorf("latest block: %w", err)
	}
	var salt common.Hash
	if _, err := rand.Read(salt[:]); err != nil {
		return PlanTerms{}, err
	}
	pd, err := r.plans.Domain(ctx)
	if err != nil {
		return PlanTerms{}, err
	}
	permit, td, allowance, err := r.permitFor(ctx, head.Time, payer, capPerPeriod)
	if err != nil {
		return PlanTerms{}, err
	}
	t := PlanTerms{
		Plan: chain.Plan{Payer: payer, Payee: payee, Token: r.token.Address, CapPerPeriod: amount(capPerPeriod),
			Period: new(big.Int).SetUint64(periodSeconds), Start: new(big.Int).SetUint64(start(head.Time)), End: new(big.Int).Set(openEnded),
			Salt: salt},
		Permit: permit, PermitTypedData: td, Periods: r.periods, Allowance: allowance,
	}
	t.PlanTypedData = chain.PlanTypedData(pd, t.Plan)
	return t, nil
}

// PermitTerms returns the permit a subscriber signs to renew what the plan
// manager may draw (PlanTerms' permit, on its own): the allowance left
// plus PermitPeriods times the cap, valid an hour, and the allowance left.
// It fails with payment_failed when no plan manager is configured.
func (r *Rail) PermitTerms(ctx context.Context, payer common.Address, capPerPeriod money.Amount) (chain.Permit, apitypes.TypedData, *big.Int, error) {
	if r.plans == nil {
		return chain.Permit{}, apitypes.TypedData{}, nil, noPlanManager()
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return chain.Permit{}, apitypes.TypedData{}, nil, fmt.Errorf("latest block: %w", err)
	}
	return r.permitFor(ctx, head.Time, payer, capPerPeriod)
}

func (r *Rail) permitFor(ctx context.Context, now uint64, payer common.Address, capPerPeriod money.Amount) (chain.Permit, apitypes.TypedData, *big.Int, error) {
	td, err := r.token.Domain(ctx)
	if err != nil {
		return chain.Permit{}, apitypes.TypedData{}, nil, err
	}
	nonce, err := r.token.PermitNonce(ctx, payer)
	if err != nil {
		return chain.Permit{}, apitypes.TypedData{}, nil, fmt.Errorf("permit nonce: %w", err)
	}
	allowance, err := r.token.Allowance(ctx, payer, r.plans.Address)
	if err != nil {
		return chain.Permit{}, apitypes.TypedData{}, nil, fmt.Errorf("allowance: %w", err)
	}
	value := new(big.Int).Mul(amount(capPerPeriod), new(big.Int).SetUint64(r.periods))
	value.Add(value, allowance)
	p := chain.Permit{Owner: payer, Spender: r.plans.Address, Value: value, Nonce: nonce,
		Deadline: new(big.Int).SetUint64(now + permitValidity)}
	return p, chain.PermitTypedData(td, p), allowance, nil
}

func noPlanManager() error {
	return apperr.New(apperr.PaymentFailed, "subscriptions cannot be paid: no plan manager contract is configured (serve --plan-manager-address)")
}

// CheckPlan checks a plan posted back by a checkout page against the terms
// PlanTerms offers: payee, token, cap and period exactly, a start no later
// than the latest block and at most a day before it, no end. It fails with
// invalid_request naming the field.
func (r *Rail) CheckPlan(ctx context.Context, p chain.Plan, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64) error {
	if err := r.checkTerms(p, payee, capPerPeriod, periodSeconds); err != nil {
		return err
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("latest block: %w", err)
	}
	now := new(big.Int).SetUint64(head.Time)
	if p.Start.Cmp(now) > 0 || new(big.Int).Sub(now, p.Start).Cmp(big.NewInt(24*60*60)) > 0 {
		return apperr.Field("plan.start", "must be within the day before the latest block's time (%s)", now)
	}
	return nil
}

// checkTerms checks what every plan a page posts must match exactly.
func (r *Rail) checkTerms(p chain.Plan, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64) error {
	switch {
	case p.Payee != payee:
		return apperr.Field("plan.payee", "must be the merchant's wallet %s", payee.Hex())
	case p.Token != r.token.Address:
		return apperr.Field("plan.token", "must be %s", r.token.Address.Hex())
	case p.CapPerPeriod.Cmp(amount(capPerPeriod)) != 0:
		return apperr.Field("plan.capPerPeriod", "must be %s", capPerPeriod)
	case p.Period.Cmp(new(big.Int).SetUint64(periodSeconds)) != 0:
		return apperr.Field("plan.period", "must be %d", periodSeconds)
	case p.End.Cmp(openEnded) != 0:
		return apperr.Field("plan.end", "must be %s", openEnded)
	}
	return nil
}

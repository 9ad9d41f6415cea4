package subscriptions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/wallet"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// proration is what an immediate change moves for the rest of the period:
// (new − old) × remaining ÷ period, in whole seconds, rounded half up once,
// then discounted as the period's charges are (see discountBy).
type proration struct {
	amount            money.Amount // > 0 charged, < 0 credited: gross + adjust
	gross             money.Amount // the prorated difference
	adjust            money.Amount // the discount's part: ≤ 0 on a charge, ≥ 0 on a credit
	discount          *Discount
	remaining, period int64 // seconds
	effective         time.Time
}

// prorate computes a change's proration at now (nothing for period_end).
func prorate(x Subscription, p plans.Plan, at string, now time.Time) (proration, error) {
	if at == AtPeriodEnd || p.ID == x.PlanID {
		eff := *x.CurrentPeriodEnd
		if at == AtNow {
			eff = now
		}
		return proration{effective: eff}, nil
	}
	start, end := *x.CurrentPeriodStart, *x.CurrentPeriodEnd
	period := int64(end.Sub(start) / time.Second)
	remaining := max(0, min(period, int64(end.Sub(now)/time.Second)))
	diff, err := money.Sub(p.Amount, *x.Amount)
	if err != nil {
		return proration{}, apperr.Field("plan", "the difference of the amounts is too large")
	}
	if period <= 0 {
		return proration{effective: now}, nil
	}
	amount, err := money.Prorate(diff, remaining, period)
	if err != nil {
		return proration{}, apperr.Field("plan", "the proration is too large")
	}
	pr := proration{amount: amount, gross: amount, remaining: remaining, period: period, effective: now}
	err = pr.discountBy(x)
	return pr, err
}

// discountBy applies x's discount to the proration when it covers the
// current period, whose charges the proration adds to: an upgrade's charge
// loses what the discount takes off a charge (percent rounded half up once;
// an amount off, at most the charge), as a renewal's does. A downgrade's
// credit keeps the same share of the difference a percent discount leaves
// (the customer paid that share of the old plan's price); an amount off is
// a fixed sum per charge, the same on either plan, so the difference it
// leaves is the whole. A discount that has ended is not held any more (a
// once coupon ends with the charge it covered), and one applied during
// the period covers the next period on.
func (pr *proration) discountBy(x Subscription) error {
	if pr.gross == 0 {
		return nil
	}
	d, err := x.StoredDiscount()
	if err != nil || d == nil || !d.covers(x.PeriodIndex) {
		return err
	}
	if pr.gross > 0 {
		pr.adjust = -d.off(pr.gross)
	} else if d.PercentOff != nil {
		pr.adjust = d.off(-pr.gross)
	}
	pr.discount, pr.amount = d, pr.gross+pr.adjust
	return nil
}

// lines explain the proration: one proration line, and the discount's
// when it changes the amount; they add up to the amount.
func (pr proration) lines(x Subscription, p plans.Plan) []wire.PaymentLine {
	if pr.gross == 0 {
		return []wire.PaymentLine{}
	}
	q := fmt.Sprint(pr.remaining)
	ls := []wire.PaymentLine{{Kind: "proration", Quantity: &q, Amount: pr.gross.String(),
		Description: fmt.Sprintf("%s to %s for the %d of %d seconds left in the period: (%s − %s) × %d ÷ %d, rounded half up",
			x.PlanID, p.ID, pr.remaining, pr.period, p.Amount, *x.Amount, pr.remaining, pr.period)}}
	if pr.adjust != 0 {
		ls = append(ls, wire.PaymentLine{Kind: LineDiscount, Description: pr.discount.Describe(), Amount: pr.adjust.String()})
	}
	return ls
}

// wire is the preview of the change.
func (pr proration) wire(x Subscription, p plans.Plan, at string) (wire.SubscriptionChangePreview, error) {
	due, credit := money.Amount(0), money.Amount(0)
	if pr.amount > 0 {
		due = pr.amount
	} else {
		credit = -pr.amount
	}
	next, err := nextChargeOn(x, p)
	return wire.SubscriptionChangePreview{Object: "subscription_change_preview", SubscriptionID: x.ID, PlanID: p.ID, At: at,
		EffectiveAt: wire.Timestamp(pr.effective), AmountDueNow: due.String(), CreditGranted: credit.String(),
		Lines: pr.lines(x, p), NextCharge: wire.NextCharge{Amount: next.String(), At: wire.Timestamp(*x.CurrentPeriodEnd)}}, err
}

// nextChargeOn is the charge of x's next period on plan p: its amount,
// less x's discount when it covers that period (a licensed plan's next
// renewal, or the first period a trial ends into; a metered plan's amount
// is shown as it is, its charge depends on usage); nothing when x ends with
// its period.
func nextChargeOn(x Subscription, p plans.Plan) (money.Amount, error) {
	if x.CancelAt != nil && !x.CancelAt.After(*x.CurrentPeriodEnd) {
		return 0, nil
	}
	n := x.PeriodIndex + 1
	if x.Status == Trialing {
		n = x.PeriodIndex
	}
	d, err := x.StoredDiscount()
	if err != nil || d == nil || !d.covers(n) || p.UsageType == plans.Metered {
		return p.Amount, err
	}
	return p.Amount - d.off(p.Amount), nil
}

// changeNow changes the plan at once: the proration is charged on the rail
// (nothing when a discount takes it all) or granted as credits, then the
// terms, the features and the event, all in tx (a Local rail settles in tx
// too, so a crash leaves all or nothing).
func changeNow(ctx context.Context, tx *store.Tx, env ChangeEnv, x Subscription, p plans.Plan, pr proration, now time.Time) (ChangeResult, error) {
	from := x.PlanID
	n := x.Changes + 1
	switch {
	case pr.amount > 0:
		pay, err := chargeProration(ctx, tx, env, x, p, pr, n, now)
		if err != nil {
			return ChangeResult{}, err
		}
		x.LatestPaymentID = &pay.ID
	case pr.amount < 0:
		reason := fmt.Sprintf("proration of %s: %s to %s", x.ID, from, p.ID)
		if pr.adjust != 0 {
			reason += ", less " + pr.discount.Describe()
		}
		key := fmt.Sprintf("%s:change:%d", x.ID, n)
		if _, err := credits.GrantTx(ctx, tx, x.Scope(), credits.GrantInput{Customer: customers.Ref{ID: x.CustomerID},
			Amount: -pr.amount, Reason: &reason, IdempotencyKey: &key}, now); err != nil {
			return ChangeResult{}, err
		}
	}
	x.adopt(p, *x.CurrentPeriodEnd)
	x.Changes = n
	if err := switchFeatures(ctx, tx, x, p, now); err != nil {
		return ChangeResult{}, err
	}
	return storeChange(ctx, tx, x, now)
}

// chargeProration charges an upgrade's proration under a key of the
// subscription's n-th change, its plan and amount, so a retry after a crash
// gets the rail's same settlement; it records the payment.
func chargeProration(ctx context.Context, tx *store.Tx, env ChangeEnv, x Subscription, p plans.Plan, pr proration, n int, now time.Time) (payments.Payment, error) {
	rl, ok := env.Rail(x.Mode)
	if !ok {
		return payments.Payment{}, apperr.New(apperr.PaymentFailed, "no settlement rail for %s mode", x.Mode)
	}
	w, _, err := wallet.Get(ctx, tx, x.Scope())
	if err != nil {
		return payments.Payment{}, err
	}
	req := rail.Request{Scope: x.Scope(), Kind: rail.Charge, Key: fmt.Sprintf("chg:%s:change:%d:%s:%s", x.ID, n, p.ID, pr.amount),
		Nonce: deref(x.AuthorizationKey), Payer: deref(x.Payer), Payee: w.Address, Amount: pr.amount, At: now}
	var st rail.Settlement
	if local, ok := rl.(rail.Local); ok {
		for attempt := 0; attempt < 3; attempt++ {
			if st, err = local.SettleTx(ctx, tx, req); err == nil || !rail.IsTransient(err) {
				break
			}
		}
	} else {
		st, err = rail.SettleOne(ctx, rl, req)
	}
	if err != nil {
		return payments.Payment{}, err
	}
	switch st.Status {
	case rail.Succeeded:
	case rail.Pending:
		return payments.Payment{}, apperr.New(apperr.ServiceUnavailable, "the proration charge is not final yet: send the request again with the same Idempotency-Key")
	default:
		return payments.Payment{}, apperr.New(apperr.PaymentFailed, "the proration charge of %s failed: %s", pr.amount, st.Reason)
	}
	lines, err := json.Marshal(pr.lines(x, p))
	if err != nil {
		return payments.Payment{}, err
	}
	pay := payments.FromSettlement(x.Scope(), st)
	start, end := now, *x.CurrentPeriodEnd
	pay.SubscriptionID, pay.CustomerID, pay.PeriodStart, pay.PeriodEnd, pay.Lines = &x.ID, x.CustomerID, &start, &end, lines
	stored, _, err := payments.Insert(ctx, tx, pay)
	return stored, err
}

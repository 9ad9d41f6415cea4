package daemon

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Live mode's re-authorization page (/checkout/{sub_…}?plan=…&at=…) asks
// the payer's wallet for what a plan checkout asks (the section of kind
// "plan": a new PlanManager plan with the new amount as its cap, and a
// bounded permit) at /checkout/{sub_…}/authorization with the same query,
// and the relayer activates it with the proration as its first charge
// (internal/chainrail, change.go, says why a new plan and how its periods
// are laid). The change is made when the settlement worker records the
// confirmed activation (subscriptions.RecordReauthorization).

// changeTerms answers GET /checkout/{sub_…}/authorization?plan=…&at=…&payer=0x…:
// the new plan and permit the subscription's payer signs.
func (s *Server) changeTerms(w http.ResponseWriter, r *http.Request, t liveTarget, payer common.Address) {
	ctx := r.Context()
	terms, err := func() (checkoutTerms, error) {
		if err := samePayer(*t.sub, payer); err != nil {
			return checkoutTerms{}, err
		}
		change, err := changeOf(r.URL.Query())
		if err != nil {
			return checkoutTerms{}, err
		}
		re, err := subscriptions.PrepareReauthorization(ctx, s.db, t.sub.ID, change, s.cfg.Clock.Now())
		if err != nil {
			return checkoutTerms{}, err
		}
		if re.Done {
			return checkoutTerms{}, apperr.Field("plan", "subscription %s has moved to %s already: there is nothing to sign", t.sub.ID, re.Plan.ID)
		}
		period, err := chainrail.PeriodSeconds(re.Plan.Interval, re.Plan.IntervalDays)
		if err != nil {
			return checkoutTerms{}, err
		}
		pt, err := s.onchain.ChangeTerms(ctx, payer, t.payee, re.Plan.Amount, period, re.UntilRenewal)
		if err != nil {
			return checkoutTerms{}, err
		}
		plan, permit := chain.WalletTypedData(pt.PlanTypedData), chain.WalletTypedData(pt.PermitTypedData)
		return checkoutTerms{Object: "checkout_terms", Kind: "plan", Subscription: t.sub.ID, Plan: &plan, Permit: &permit,
			PermitSummary: permitSummaryOf(pt.Permit.Value, pt.Allowance, pt.Periods, re.Plan.Amount, periodText(re.Plan.Interval, re.Plan.IntervalDays))}, nil
	}()
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, terms)
}

// reauthorize takes POST /checkout/{sub_…}/authorization?plan=…&at=…, the
// body a plan checkout posts (chainrail.ParseActivation): the payer's
// signed new plan and permit, checked and submitted by the relayer under a
// key of the subscription and the signed plan. Posting the same signed
// plan again answers the first submission; another signed plan while one
// is in flight answers that one (one open re-authorization per
// subscription); once the change is made, it answers the subscription.
func (s *Server) reauthorize(ctx context.Context, t liveTarget, q url.Values, body []byte) (wire.CheckoutAuthorization, error) {
	x := *t.sub
	change, err := changeOf(q)
	if err != nil {
		return wire.CheckoutAuthorization{}, err
	}
	page := "/checkout/" + url.PathEscape(x.ID) + "?" + url.Values{"plan": {change.Plan}, "at": {change.At}}.Encode()
	out := wire.CheckoutAuthorization{Object: "checkout_authorization", ReceiptURL: page}
	act, _, err := chainrail.ParseActivation(body)
	if err != nil {
		return out, err
	}
	if err := samePayer(x, act.Plan.Payer); err != nil {
		return out, err
	}
	key, err := s.onchain.ChangeKey(ctx, x.ID, act.Plan)
	if err != nil {
		return out, err
	}
	if st, ok, err := s.onchain.Lookup(ctx, x.Scope(), key); err != nil || ok && st.Status != rail.Pending {
		if err != nil {
			return out, err
		}
		return s.reauthorizationAnswer(ctx, out, x.ID, st)
	}
	re, err := subscriptions.PrepareReauthorization(ctx, s.db, x.ID, change, s.cfg.Clock.Now())
	if err != nil {
		return out, err
	}
	if re.Done {
		xw := re.Subscription.Wire()
		out.Status, out.Subscription = rail.Succeeded, &xw
		return out, nil
	}
	period, err := chainrail.PeriodSeconds(re.Plan.Interval, re.Plan.IntervalDays)
	if err != nil {
		return out, err
	}
	if err := s.onchain.CheckChangePlan(ctx, act.Plan, t.payee, re.Plan.Amount, period, re.UntilRenewal); err != nil {
		return out, err
	}
	act.PlanID, act.CustomerID = re.Plan.ID, deref(x.CustomerID)
	act.Change = &chainrail.PlanChange{SubscriptionID: x.ID, At: change.At, Effective: re.Effective}
	st, err := rail.SettleOne(ctx, s.onchain, rail.Request{Scope: x.Scope(), Kind: rail.Activate, Key: key, Nonce: key,
		Payer: strings.ToLower(act.Plan.Payer.Hex()), Payee: t.payee.Hex(), Amount: re.Proration, At: re.Effective, Payload: &act})
	if err != nil {
		return out, err
	}
	return s.reauthorizationAnswer(ctx, out, x.ID, st)
}

// reauthorizationAnswer is the answer of a submitted re-authorization:
// pending, succeeded with the subscription once the change is recorded,
// or payment_failed naming the chain's reason.
func (s *Server) reauthorizationAnswer(ctx context.Context, out wire.CheckoutAuthorization, subscriptionID string, st rail.Settlement) (wire.CheckoutAuthorization, error) {
	if st.Status == rail.Failed {
		return out, apperr.New(apperr.PaymentFailed, "the authorization of the new plan failed: %s; nothing changed", st.Reason)
	}
	out.Status = st.Status
	out.ReceiptURL += "&activation=" + url.QueryEscape(st.Key)
	if st.Status == rail.Succeeded {
		x, ok, err := subscriptions.ByID(ctx, s.db, subscriptionID)
		if err != nil {
			return out, err
		}
		if ok && x.AuthorizationKey != nil && *x.AuthorizationKey == st.Key {
			xw := x.Wire()
			out.Subscription = &xw
		}
	}
	return out, nil
}

// changeSection fills the live section of a re-authorization page: the
// wallet button that signs the new plan, how a submitted one stands
// (?activation=, as the POST answered), or, once the change is made, the
// subscription as it is now.
func (s *Server) changeSection(r *http.Request, id string, lv *liveView, v *checkoutView) error {
	ctx := r.Context()
	q := r.URL.Query()
	x, _, err := s.liveSubscription(ctx, id)
	if err != nil {
		if apperr.CodeOf(err) == apperr.ResourceNotFound {
			return nil
		}
		return err
	}
	change, err := changeOf(q)
	if err != nil {
		return nil
	}
	_, p, ok, err := subscriptions.ReauthorizationTarget(ctx, s.db, x.ID, change.Plan)
	if err != nil || !ok {
		return err
	}
	lv.Kind, lv.Change, lv.Cap = "plan", true, p.Amount.USDC()
	lv.AuthorizationURL += "?" + url.Values{"plan": {change.Plan}, "at": {change.At}}.Encode()
	if key := q.Get("activation"); strings.HasPrefix(key, "act:"+x.ID+":") {
		st, ok, err := s.onchain.Lookup(ctx, x.Scope(), key)
		if err != nil {
			return err
		}
		switch {
		case ok && x.AuthorizationKey != nil && *x.AuthorizationKey == key:
			s.changedReceipt(x, st, v)
			return nil
		case ok && st.Status == rail.Succeeded:
			// Confirmed, not recorded yet: the worker is about to.
			lv.Pending, lv.TxHash = true, st.TxHash
		case ok:
			s.showAttempt(lv, st)
		}
	}
	switch _, ok, err := s.payeeOf(ctx, x.Scope(), nil); {
	case err != nil:
		return err
	case !ok:
		lv.Unavailable = noWalletText
	case !x.Live():
		lv.Ended = true
	default:
		if re, err := subscriptions.PrepareReauthorization(ctx, s.db, x.ID, change, s.cfg.Clock.Now()); err == nil && !re.Done {
			v.Paragraphs = append(v.Paragraphs, dueNowText(re))
		}
		lv.Period = periodText(p.Interval, p.IntervalDays)
		lv.PermitPeriods = s.onchain.PermitPeriods()
		lv.PermitTotal = usdcText(new(big.Int).Mul(big.NewInt(int64(p.Amount)), new(big.Int).SetUint64(lv.PermitPeriods)))
	}
	v.Live = lv
	return nil
}

// changedReceipt shows the subscription after its change was recorded.
func (s *Server) changedReceipt(x subscriptions.Subscription, st rail.Settlement, v *checkoutView) {
	v.Status, v.StatusText, v.Wallets, v.Notice = x.Status, statusText(x.Status), nil, nil
	v.PayURL = ""
	v.Paragraphs = []string{"Your subscription " + x.ID + " is on this plan now."}
	if x.PendingPlanID != nil {
		v.Paragraphs = []string{"Your subscription " + x.ID + " moves to this plan at the end of the current period."}
	}
	v.ReceiptTitle = "Your plan changed"
	v.Receipt = []fact{{Label: "Subscription", Value: x.ID, ID: "subscription-id", Code: true},
		{Label: "Plan", Value: x.PlanID, ID: "subscription-plan", Code: true}}
	if x.PendingPlanID != nil && x.PendingChangeAt != nil {
		v.Receipt = append(v.Receipt, fact{Label: "Next plan", Value: *x.PendingPlanID, ID: "pending-plan", Code: true},
			timeFact("From", "pending-change-at", *x.PendingChangeAt, day))
	}
	if x.LatestPaymentID != nil && st.Amount > 0 {
		v.Receipt = append(v.Receipt, fact{Label: "Charged now", Value: st.Amount.USDC() + " USDC", ID: "charged-now"},
			fact{Label: "Payment", Value: *x.LatestPaymentID, ID: "payment-id", Code: true})
	}
	v.Receipt = append(v.Receipt, fact{Label: "Transaction", Value: st.TxHash, ID: "tx-hash", Code: true},
		fact{Label: "Network", Value: networkText(st.Network), ID: "network"})
}

// dueNowText says what the activation draws at once.
func dueNowText(re subscriptions.Reauthorization) string {
	if re.Proration > 0 {
		return re.Proration.USDC() + " USDC is due now for the rest of the current period: it is drawn when the new plan is activated."
	}
	return "Nothing is charged now: the new amount is charged from the next period on."
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

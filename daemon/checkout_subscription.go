package daemon

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// A live subscription's own page, GET /checkout/{sub_…}: the subscription
// as its receipt shows it, what the spending permit still allows, a button
// to renew the permit (the page to send a customer whose renewal failed
// with allowance_too_low) and the way to stop paying
// (/checkout/{sub_…}/revoke). Subscription ids are unguessable, as invoice
// and plan ids are.

// liveSubscription finds the live-mode subscription id paid on chain, and
// its plan; anything else is resource_not_found.
func (s *Server) liveSubscription(ctx context.Context, id string) (subscriptions.Subscription, plans.Plan, error) {
	gone := apperr.New(apperr.ResourceNotFound, "no live subscription %q", truncate(id, 80))
	if fields.TextProblem(id) != "" {
		return subscriptions.Subscription{}, plans.Plan{}, gone
	}
	x, ok, err := subscriptions.ByID(ctx, s.db, id)
	if err != nil {
		return x, plans.Plan{}, err
	}
	if !ok || x.Mode != tenant.Live || x.AuthorizationKey == nil || s.onchain == nil {
		return x, plans.Plan{}, gone
	}
	p, ok, err := plans.Get(ctx, s.db, x.PlanID)
	if err != nil || !ok {
		return x, p, notFoundUnless(err, x.PlanID)
	}
	return x, p, nil
}

// subscriptionView is the page of a live subscription: its plan's page
// with the subscription's receipt.
func (s *Server) subscriptionView(ctx context.Context, id string) (checkoutView, error) {
	x, _, err := s.liveSubscription(ctx, id)
	if apperr.CodeOf(err) == apperr.ResourceNotFound {
		return notFoundView(), nil
	}
	if err != nil {
		return notFoundView(), err
	}
	pg, ok, err := checkout.LoadPlanPage(ctx, s.db, x.PlanID, x.ID)
	if err != nil || !ok || pg.Subscription == nil {
		return notFoundView(), err
	}
	v := s.planView(pg, "")
	v.Title = "Your subscription to " + pg.ProductName
	return v, nil
}

// subscriptionSection fills the live section of a subscription's page:
// the permit's standing and the button that renews it, or that it ended.
func (s *Server) subscriptionSection(ctx context.Context, id string, lv *liveView, v *checkoutView) error {
	x, p, err := s.liveSubscription(ctx, id)
	if err != nil {
		if apperr.CodeOf(err) == apperr.ResourceNotFound {
			return nil
		}
		return err
	}
	st, err := s.onchain.Standing(ctx, x.Scope(), *x.AuthorizationKey)
	if err != nil {
		return err
	}
	lv.Kind, lv.Cap = "permit", p.Amount.USDC()
	lv.Period = periodText(p.Interval, p.IntervalDays)
	lv.PermitPeriods = s.onchain.PermitPeriods()
	lv.Allowance = usdcText(st.Allowance)
	lv.PermitTotal = usdcText(new(big.Int).Mul(big.NewInt(int64(p.Amount)), new(big.Int).SetUint64(lv.PermitPeriods)))
	lv.PermitUsedUp = st.LastFailure == string(chain.AllowanceTooLow) && x.Live()
	lv.Ended = !x.Live() || st.Revoked
	lv.RevokeURL = "/checkout/" + url.PathEscape(id) + "/revoke"
	v.Live = lv
	return nil
}

// permitTerms answers GET /checkout/{sub_…}/authorization?payer=0x…: the
// renewed permit the subscription's payer signs.
func (s *Server) permitTerms(w http.ResponseWriter, r *http.Request, t liveTarget, payer common.Address) {
	if err := samePayer(*t.sub, payer); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	if !t.sub.Live() {
		writeError(w, r, s.log, apperr.New(apperr.InvalidRequest, "subscription %s is %s: there is nothing to renew", t.sub.ID, t.sub.Status))
		return
	}
	permit, td, allowance, err := s.onchain.PermitTerms(r.Context(), payer, t.plan.Amount)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	wtd := chain.WalletTypedData(td)
	writeJSON(w, http.StatusOK, checkoutTerms{Object: "checkout_terms", Kind: "permit", Subscription: t.sub.ID, Permit: &wtd,
		PermitSummary: permitSummaryOf(permit.Value, allowance, s.onchain.PermitPeriods(), t.plan.Amount, periodText(t.plan.Interval, t.plan.IntervalDays))})
}

// renewPermit takes POST /checkout/{sub_…}/authorization,
// {"value", "deadline", "signature"}: the payer's renewed permit, verified
// and relayed (the payer pays no gas).
func (s *Server) renewPermit(ctx context.Context, t liveTarget, body []byte) (wire.CheckoutAuthorization, error) {
	out := wire.CheckoutAuthorization{Object: "checkout_authorization", ReceiptURL: "/checkout/" + url.PathEscape(t.sub.ID)}
	in, err := parsePermitRenewal(body)
	if err != nil {
		return out, err
	}
	if !t.sub.Live() {
		return out, apperr.New(apperr.InvalidRequest, "subscription %s is %s: there is nothing to renew", t.sub.ID, t.sub.Status)
	}
	st, err := s.onchain.RenewPermit(ctx, t.sub.Scope(), *t.sub.AuthorizationKey, big.NewInt(int64(t.plan.Amount)), in)
	if f := asChainFailure(err); f != nil {
		return out, apperr.New(apperr.PaymentFailed, "the permit cannot be applied: %s", f.Reason)
	}
	if err != nil {
		return out, err
	}
	out.Status = rail.Pending
	if st.State.Final() {
		out.Status = rail.Succeeded
	}
	return out, nil
}

// parsePermitRenewal reads {"value", "deadline", "signature"} (integers as
// decimal strings or JSON integers).
func parsePermitRenewal(body []byte) (chainrail.PermitRenewal, error) {
	var raw struct {
		Value     json.RawMessage `json:"value"`
		Deadline  json.RawMessage `json:"deadline"`
		Signature string          `json:"signature"`
	}
	o, err := fields.Decode(body)
	if err != nil {
		return chainrail.PermitRenewal{}, err
	}
	raw.Value, raw.Deadline = o.Raw("value"), o.Raw("deadline")
	sig := o.String("signature", 1, 2+2*4096)
	if err := o.Err(); err != nil {
		return chainrail.PermitRenewal{}, err
	}
	var in chainrail.PermitRenewal
	if in.Value, err = uintField("value", raw.Value); err != nil {
		return in, err
	}
	if in.Deadline, err = uintField("deadline", raw.Deadline); err != nil {
		return in, err
	}
	if sig == nil {
		return in, apperr.Field("signature", "is required")
	}
	if in.Signature, err = chain.ParseSignature(*sig); err != nil {
		return in, apperr.Field("signature", "%s", message(err))
	}
	return in, nil
}

// uintField reads a uint256 given as a decimal string or a JSON integer.
func uintField(name string, raw json.RawMessage) (*big.Int, error) {
	if raw == nil {
		return nil, apperr.Field(name, "is required")
	}
	s := string(raw)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, apperr.Field(name, "must be a decimal string or an integer")
		}
	}
	v, err := chain.ParseUint256(s)
	if err != nil {
		return nil, apperr.Field(name, "%s", message(err))
	}
	return v, nil
}

// samePayer refuses a wallet that is not the subscription's payer.
func samePayer(x subscriptions.Subscription, payer common.Address) error {
	if x.Payer == nil || !strings.EqualFold(*x.Payer, payer.Hex()) {
		return apperr.Field("payer", "this subscription is paid from another wallet: connect the wallet you subscribed with")
	}
	return nil
}

func asChainFailure(err error) *chain.Failure {
	if f, ok := err.(*chain.Failure); ok {
		return f
	}
	return nil
}

package daemon

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// A plan switch in the portal: the overview's form asks for a preview
// (GET …/change?plan=…&at=…, which changes nothing), and the preview's
// form makes the change (POST …/change) through the same domain function
// as POST /v1/subscriptions/{id}/change, so it emits subscription.updated
// and follows the same rules. The customer may move only to one of the
// session's plans, or back to the current plan (which drops a pending
// change). A switch above what the payer authorized is sent to the
// checkout page where the payer authorizes it; the change happens there.

// changeView is the preview page's body.
type changeView struct {
	SubscriptionID, Product, From, To, At, ToPlan string
	Now                                           bool
	DueNow, Credited, Effective                   string
	NextAmount, NextAt                            string
	Lines                                         []lineRow
	ConfirmURL, BackURL                           string
}

// portalChangeInput is the plan and timing of a switch from a form or a
// query, refused (not found) unless the session allows the plan.
func portalChangeInput(pr portalRequest, x subscriptions.Subscription, v url.Values) (subscriptions.ChangeInput, bool) {
	in := subscriptions.ChangeInput{Plan: v.Get("plan"), At: subscriptions.AtPeriodEnd}
	if v.Get("at") == subscriptions.AtNow {
		in.At = subscriptions.AtNow
	}
	return in, in.Plan == x.PlanID || pr.MayChangeTo(in.Plan)
}

func (s *Server) changeEnv() subscriptions.ChangeEnv {
	return subscriptions.ChangeEnv{Rail: s.money.railFor, BaseURL: s.baseURL}
}

// portalChangePreview serves GET /portal/{token}/subscriptions/{id}/change.
func (s *Server) portalChangePreview(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	x, err := pr.Subscription(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	in, allowed := portalChangeInput(pr, x, r.URL.Query())
	if !allowed {
		s.portalMissing(w, r)
		return
	}
	in.Preview = true
	res, err := subscriptions.Change(r.Context(), s.db, s.changeEnv(), pr.Scope(), x.ID, in, pr.Now)
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	plans, err := portal.PlansByID(r.Context(), s.db, pr.Open, []string{x.PlanID, in.Plan})
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	p := res.Preview
	v := changeView{SubscriptionID: x.ID, From: planName(plans, x.PlanID), To: planName(plans, in.Plan), ToPlan: in.Plan, At: in.At,
		Now: in.At == subscriptions.AtNow, DueNow: wireUSDC(p.AmountDueNow), Credited: wireUSDC(p.CreditGranted),
		NextAmount: wireUSDC(p.NextCharge.Amount), ConfirmURL: pr.base + "/subscriptions/" + x.ID + "/change", BackURL: pr.base}
	if t, err := time.Parse(time.RFC3339, p.EffectiveAt); err == nil {
		v.Effective = day(t)
	}
	if t, err := time.Parse(time.RFC3339, p.NextCharge.At); err == nil {
		v.NextAt = day(t)
	}
	for _, l := range p.Lines {
		row := lineRow{Description: l.Description, Amount: wireUSDC(l.Amount)}
		if l.Quantity != nil {
			row.Quantity = *l.Quantity
		}
		v.Lines = append(v.Lines, row)
	}
	f := pr.frame("Switch plan", "Overview")
	f.Body = v
	s.renderPortal(w, r, http.StatusOK, portalChangePage, f)
}

// planName names a plan by its product, from the session's plans (the
// id when it is not one of them).
func planName(plans []portal.Plan, id string) string {
	for _, p := range plans {
		if p.ID == id {
			return p.ProductName
		}
	}
	return id
}

// portalChange makes the switch the preview showed; it answers where the
// browser goes next: the overview with its notice, or the checkout page
// where the payer authorizes a larger amount.
func (s *Server) portalChange(r *http.Request, pr portalRequest, x subscriptions.Subscription) (string, error) {
	in, allowed := portalChangeInput(pr, x, r.PostForm)
	if !allowed {
		return "", apperr.New(apperr.ResourceNotFound, "no such plan for this session")
	}
	_, err := subscriptions.Change(r.Context(), s.db, s.changeEnv(), pr.Scope(), x.ID, in, pr.Now)
	if e, ok := apperr.As(err); ok && e.Code == apperr.AuthorizationRequired && e.CheckoutURL != "" {
		return e.CheckoutURL, nil
	}
	if err != nil {
		return "", err
	}
	done := "scheduled"
	switch {
	case in.Plan == x.PlanID:
		done = "kept"
	case in.At == subscriptions.AtNow:
		done = "changed"
	}
	return pr.base + "?done=" + done, nil
}

package daemon

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
)

// The page of a plan change above what the payer authorized (the
// checkout_url of authorization_required): GET /checkout/{sub_…}?plan=…&at=…
// shows the new plan and, in test mode, the subscription's payer wallet;
// POST /checkout/{sub_…}/pay with the same query is the payer authorizing
// the new amount, and the change happens then.

// reauthorizing reports whether a request to a subscription's page is for
// a plan change's authorization.
func reauthorizing(id string, q url.Values) bool {
	return strings.HasPrefix(id, "sub_") && q.Has("plan")
}

// changeOf is the change a re-authorization page carries in its query.
func changeOf(q url.Values) (subscriptions.ChangeInput, error) {
	in := subscriptions.ChangeInput{Plan: q.Get("plan"), At: q.Get("at")}
	if in.At == "" {
		in.At = subscriptions.AtPeriodEnd
	}
	if p := fields.TextProblem(in.Plan); p != "" || (in.At != subscriptions.AtNow && in.At != subscriptions.AtPeriodEnd) {
		return in, apperr.New(apperr.ResourceNotFound, "no such plan change")
	}
	return in, nil
}

// reauthorizationView is the page where the payer authorizes a change.
func (s *Server) reauthorizationView(ctx context.Context, id string, q url.Values) (checkoutView, error) {
	in, err := changeOf(q)
	if err != nil {
		return notFoundView(), nil
	}
	x, p, ok, err := subscriptions.ReauthorizationTarget(ctx, s.db, id, in.Plan)
	if err != nil || !ok || !x.Live() {
		return notFoundView(), err
	}
	pg, ok, err := checkout.LoadPlanPage(ctx, s.db, p.ID, "")
	if err != nil || !ok {
		return notFoundView(), err
	}
	v := s.planView(pg, "")
	v.Title = "Authorize your new plan: " + pg.ProductName
	v.Eyebrow = "Plan change" + merchantSuffix(" from ", pg.Merchant)
	when := "at the end of the current period"
	if in.At == subscriptions.AtNow {
		when = "now, with the rest of the current period prorated"
	}
	v.Paragraphs = append(v.Paragraphs, "Your subscription "+x.ID+" moves to this plan "+when+
		". Authorize up to "+usdc(p.Amount)+" per period to make the change.")
	v.PayURL = s.payURL(id) + "?" + url.Values{"plan": {in.Plan}, "at": {in.At}}.Encode()
	v.Wallets = nil
	if x.Mode == tenant.Test && x.Payer != nil {
		v.Wallets = []walletButton{{Address: *x.Payer, Label: "Authorize with the subscription's wallet"}}
	}
	return v, nil
}

// confirmChange is POST /checkout/{sub_…}/pay?plan=…&at=…: the payer
// authorizes the new amount and the change happens.
func (s *Server) confirmChange(ctx context.Context, id string, q url.Values, in checkout.Input) (subscriptions.Subscription, error) {
	change, err := changeOf(q)
	if err != nil {
		return subscriptions.Subscription{}, err
	}
	env := subscriptions.ChangeEnv{Rail: s.money.railFor, BaseURL: s.baseURL}
	now := func(sc tenant.Scope) (time.Time, error) {
		t := s.cfg.Clock.Now()
		if sc.Mode != tenant.Test {
			return t, nil
		}
		ahead, err := testclock.Ahead(ctx, s.db, sc.MerchantID)
		return t.Add(ahead), err
	}
	return subscriptions.ConfirmChange(ctx, s.db, env, id, change, in.Payer, now)
}

// confirmChangeAnswer answers a confirmation: the subscription (JSON), or
// the page of the plan with the subscription on it.
func (s *Server) confirmChangeAnswer(w http.ResponseWriter, r *http.Request, x subscriptions.Subscription, wantsJSON bool) {
	if wantsJSON {
		writeJSON(w, http.StatusOK, x.Wire())
		return
	}
	http.Redirect(w, r, s.pagePath(x.PlanID)+"?subscription="+url.QueryEscape(x.ID), http.StatusSeeOther)
}

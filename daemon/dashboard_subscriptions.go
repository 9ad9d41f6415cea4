package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

const (
	dashSubscriptionsPage = "pages/dashboard_subscriptions.html"
	dashSubscriptionPage  = "pages/dashboard_subscription.html"
)

func (s *Server) dashSubscriptions(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/subscriptions", "Subscriptions", dashSubscriptionsPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[subscriptions.Subscription], error) {
		return subscriptions.List(ctx, s.db, d.Scope(), p)
	})
}

// dashSubscriptionView is a subscription's page: what the portal shows of
// it, with what only the merchant sees (the pending change's plan id, the
// cancellation time, the next charge), and a page of its payments.
type dashSubscriptionView struct {
	subscriptionView
	Sub      subscriptions.Subscription
	Next     *chargeView
	Payments dashListView[payments.Payment]
}

func (s *Server) dashSubscription(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	p, err := page.ParseQuery(r.URL.Query())
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	// Only the session's merchant's subscription, in its mode.
	x, err := subscriptions.Get(ctx, s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	now, err := s.scopeNow(ctx, d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v, err := s.dashSubscriptionOf(ctx, d, x, p, now)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	f := d.frame("Subscription "+x.ID, "Subscriptions")
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashSubscriptionPage, f)
}

func (s *Server) dashSubscriptionOf(ctx context.Context, d dashRequest, x subscriptions.Subscription, p page.Params, now time.Time) (dashSubscriptionView, error) {
	// The plans' names, current and pending, by the portal's read.
	o := portal.ForCustomer(d.Scope(), "", now)
	ids := []string{x.PlanID}
	if x.PendingPlanID != nil {
		ids = append(ids, *x.PendingPlanID)
	}
	plans, err := portal.PlansByID(ctx, s.db, o, ids)
	if err != nil {
		return dashSubscriptionView{}, err
	}
	ps := portal.Subscription{Subscription: x}
	if len(plans) > 0 && plans[0].ID == x.PlanID {
		ps.ProductName = &plans[0].ProductName
	}
	v := dashSubscriptionView{subscriptionView: subscriptionFacts(ps), Sub: x}
	if x.CancelAt != nil {
		v.EndsOn = whenText(x.CancelAt)
	}
	if x.PendingPlanID != nil && x.PendingChangeAt != nil {
		v.Pending, v.PendingAt = planName(plans, *x.PendingPlanID), day(*x.PendingChangeAt)
	}
	if x.TrialEnd != nil {
		v.Trial = day(*x.TrialEnd)
	}
	if x.Live() {
		// As the portal: a charge that cannot be previewed is left out,
		// the page is still the subscription's.
		if up, err := subscriptions.UpcomingOf(ctx, s.db, x, now); err == nil {
			v.Next = chargeOf(up, x.Metered() || x.Status == subscriptions.PastDue)
		}
	}
	res, err := payments.ListForSubscription(ctx, s.db, d.Scope(), x.ID, p)
	if err != nil {
		return dashSubscriptionView{}, err
	}
	v.Payments.Items = res.Items
	if res.Next != nil {
		v.Payments.Next = d.base + "/subscriptions/" + x.ID + "?before=" + res.Next.String()
	}
	return v, nil
}

package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// subscriptionOperations are customers' subscriptions: list, get, cancel
// and the upcoming charge (see the payments guide, cmd/help/payments.md).
func subscriptionOperations() []operation {
	return []operation{
		listOperation("GET /v1/subscriptions", "list_subscriptions", "subscriptions", "Lists subscriptions, newest first.",
			apispec.Operation{ID: "listSubscriptions", Tag: "Subscriptions", Summary: "List subscriptions", Query: listParams,
				Params:    []apispec.Param{{Name: "customer_id", In: "query", Doc: "Only this customer's subscriptions."}},
				Responses: listed[wire.Subscription]("subscriptions"), Errors: errs(apperr.InvalidRequest)},
			(*Server).listSubscriptions, subscriptions.List, func(_ *Server, x subscriptions.Subscription) wire.Subscription { return x.Wire() }),
		getOperation("GET /v1/subscriptions/{id}", "get_subscription", "a subscription", "Returns a subscription: its status and current period.",
			apispec.Operation{ID: "getSubscription", Tag: "Subscriptions", Summary: "Get a subscription", Params: idPath("subscription"),
				Responses: ok[wire.Subscription]("The subscription."), Errors: errs(apperr.ResourceNotFound)},
			typeOf[wire.Subscription](), func(s *Server, c *call, id string) (any, error) {
				x, err := subscriptions.Get(c.ctx, s.db, c.p.Scope, id)
				return wireOf(x, err, subscriptions.Subscription.Wire)
			}),
		{
			pattern: "POST /v1/subscriptions/{id}/cancel", class: ratelimit.ClassCreate, body: bodyOptional,
			doc: apispec.Operation{ID: "cancelSubscription", Tag: "Subscriptions", Summary: "Cancel a subscription",
				Doc: "At the period's end (default: sets cancel_at and emits subscription.updated; again, it changes nothing), or now " +
					"(at_period_end false: expires at once with subscription.expired).",
				Params: idPath("subscription"), Body: typeOf[wire.CancelRequest](),
				Responses: ok[wire.Subscription]("The subscription."), Errors: append(invalidErrs(), errs(apperr.ResourceNotFound)...)},
			run: func(s *Server, c *call) (any, error) {
				in, err := subscriptions.DecodeCancel(c.args)
				if err != nil {
					return nil, err
				}
				var x subscriptions.Subscription
				if c.tx != nil {
					x, err = subscriptions.CancelTx(c.ctx, c.tx, c.p.Scope, c.path("id"), in, s.now(c.p))
				} else {
					x, err = subscriptions.Cancel(c.ctx, s.db, c.p.Scope, c.path("id"), in, s.now(c.p))
				}
				return wireOf(x, err, subscriptions.Subscription.Wire)
			},
		},
		{
			pattern: "GET /v1/subscriptions/{id}/upcoming", class: ratelimit.ClassList, rest: (*Server).upcomingCharge,
			doc: apispec.Operation{ID: "getUpcomingCharge", Tag: "Subscriptions", Summary: "Preview the next charge",
				Doc:    "The current period rated so far (metered: with lines; capped), or the next renewal; object upcoming_charge; nothing is charged.",
				Params: idPath("subscription"), Responses: ok[wire.Payment]("The upcoming charge."),
				Errors: errs(apperr.ResourceNotFound, apperr.InvalidRequest)},
		},
	}
}

// listSubscriptions serves GET /v1/subscriptions: with customer_id, that
// customer's subscriptions only; without, every subscription.
func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q := r.URL.Query()
	return list(w, r, func(params page.Params) (page.Result[subscriptions.Subscription], error) {
		if q.Has("customer_id") {
			return subscriptions.ListForCustomer(r.Context(), s.db, p.Scope, q.Get("customer_id"), params)
		}
		return subscriptions.List(r.Context(), s.db, p.Scope, params)
	}, subscriptions.Subscription.Wire)
}

func (s *Server) upcomingCharge(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	up, err := subscriptions.Upcoming(r.Context(), s.db, p.Scope, r.PathValue("id"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, up)
	return nil
}

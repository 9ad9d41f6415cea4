package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// getCustomer serves GET /v1/customers/{id}: {id} is a cus_ id or the
// merchant's external_customer_id.
func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	c, err := customers.Lookup(r.Context(), s.db, p.Scope, r.PathValue("customer"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c.Wire())
	return nil
}

// listSubscriptionsOf serves GET /v1/subscriptions: with customer_id, that
// customer's subscriptions only; without, every subscription.
func (s *Server) listSubscriptionsOf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if !r.URL.Query().Has("customer_id") {
		return s.listSubscriptions(w, r, p)
	}
	customerID := r.URL.Query().Get("customer_id")
	return list(w, r, func(params page.Params) (page.Result[subscriptions.Subscription], error) {
		return subscriptions.ListForCustomer(r.Context(), s.db, p.Scope, customerID, params)
	}, subscriptions.Subscription.Wire)
}

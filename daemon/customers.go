package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

type customerJSON struct {
	Object             string  `json:"object"`
	ID                 string  `json:"id"`
	ExternalCustomerID *string `json:"external_customer_id"`
	CreatedAt          string  `json:"created_at"`
	Livemode           bool    `json:"livemode"`
}

func customerToJSON(c customers.Customer) customerJSON {
	return customerJSON{Object: "customer", ID: c.ID, ExternalCustomerID: c.ExternalID, CreatedAt: timestamp(c.CreatedAt), Livemode: c.Mode == tenant.Live}
}

// getCustomer serves GET /v1/customers/{id}: {id} is a cus_ id or the
// merchant's external_customer_id.
func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	c, err := customers.Lookup(r.Context(), s.db, p.Scope, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, customerToJSON(c))
	return nil
}

// listSubscriptionsOf serves GET /v1/subscriptions: with customer_id, that
// customer's subscriptions only; without, every subscription.
func (s *Server) listSubscriptionsOf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if !r.URL.Query().Has("customer_id") {
		return s.listSubscriptions(w, r, p)
	}
	customerID := r.URL.Query().Get("customer_id")
	return list(func(r *http.Request, p auth.Principal, params page.Params) (page.Result[subscriptions.Subscription], error) {
		return subscriptions.ListForCustomer(r.Context(), s.db, p.Scope, customerID, params)
	}, subscriptionToJSON)(w, r, p)
}

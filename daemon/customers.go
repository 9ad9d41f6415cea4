package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// customerOperations are reads of one customer.
func customerOperations() []operation {
	return []operation{{
		pattern: "GET /v1/customers/{customer}", class: ratelimit.ClassList, rest: (*Server).getCustomer,
		doc: apispec.Operation{ID: "getCustomer", Tag: "Customers", Summary: "Get a customer",
			Params:    []apispec.Param{{Name: "customer", In: "path", Doc: "The customer's id (cus_…) or your external_customer_id."}},
			Responses: ok[wire.Customer]("The customer."),
			Errors:    []apispec.ErrorCase{unknownCustomerPath}},
	}}
}

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

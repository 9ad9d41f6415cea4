package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// portalOperations make customer portal links (the pages are portal.go's).
func portalOperations() []operation {
	return []operation{{
		pattern: "POST /v1/portal_sessions", class: ratelimit.ClassCreate, status: http.StatusCreated, secret: true,
		doc: apispec.Operation{ID: "createPortalSession", Tag: "Portal", Summary: "Create a portal session",
			Doc: "A link to the customer portal for one customer, good for one hour: their subscriptions (cancel, undo, switch to one of plans), " +
				"usage, credits and receipts. The url carries a secret and is in this answer only; an Idempotency-Key is not recorded.",
			Body: typeOf[wire.PortalSessionRequest](), Responses: created[wire.PortalSession]("The session with its url."),
			Errors: append(invalidErrs(), errs(apperr.UnknownCustomer, apperr.CustomerRequired)...)},
		tool: &toolSpec{name: "create_portal_session", title: "Create a customer portal link",
			doc: "Makes a one-hour link to the customer portal for customer_id or external_customer_id, where the customer sees usage, " +
				"credits and receipts and manages subscriptions; plans lists the plans they may switch to. Give the url to that customer only.",
			in: typeOf[wire.PortalSessionRequest](), out: typeOf[wire.PortalSession]()},
		run: func(s *Server, c *call) (any, error) {
			in, err := portal.Decode(c.args)
			if err != nil {
				return nil, err
			}
			x, err := portal.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
			if err != nil {
				return nil, err
			}
			return x.Wire(s.portalURL(x.Token)), nil
		},
	}}
}

// portalURL is the link of the session with token.
func (s *Server) portalURL(token string) string { return s.baseURL + "/portal/" + token }

package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// entitlementOperations are grants of features and the access check.
func entitlementOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/entitlement_grants", class: ratelimit.ClassCreate, status: http.StatusCreated,
			doc: apispec.Operation{ID: "createEntitlementGrant", Tag: "Entitlements", Summary: "Grant a feature",
				Doc: "Emits entitlement.granted.", Body: typeOf[wire.EntitlementGrantRequest](),
				Responses: created[wire.EntitlementGrant]("The grant."),
				Errors:    append(invalidErrs(), errs(apperr.CustomerRequired, apperr.UnknownCustomer, apperr.UnknownFeature)...)},
			tool: &toolSpec{name: "grant_entitlement", title: "Grant a feature",
				doc: "Grants a feature to a customer, with a usage limit for a metered feature and an optional end; emits entitlement.granted. " +
					"A new grant replaces the customer's current one for that feature.",
				in: typeOf[wire.EntitlementGrantRequest](), out: typeOf[wire.EntitlementGrant]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := entitlements.Decode(c.args)
				if err != nil {
					return nil, err
				}
				var g entitlements.GrantRecord
				if c.tx != nil {
					g, err = entitlements.GrantTx(c.ctx, c.tx, c.p.Scope, in, s.now(c.p))
				} else {
					g, err = entitlements.Grant(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				}
				return wireOf(g, err, entitlements.GrantRecord.Wire)
			},
		},
		{
			pattern: "GET /v1/customers/{customer}/entitlements/{feature_key}", class: ratelimit.ClassEntitlementCheck,
			doc: apispec.Operation{ID: "checkEntitlement", Tag: "Entitlements", Summary: "Check access to a feature",
				Params: []apispec.Param{customerPath, {Name: "feature_key", In: "path", Doc: "The feature's key."}},
				Responses: []apispec.Response{{Status: 200, Doc: "Whether the customer is entitled, and for a metered feature its limit, usage and what remains.",
					Body: typeOf[wire.Entitlement]()}},
				Errors: []apispec.ErrorCase{unknownCustomerPath, errs(apperr.UnknownFeature)[0]}},
			tool: &toolSpec{name: "check_entitlement", title: "Check access to a feature",
				doc: "Answers whether a customer may use a feature now (entitled, with the reason), and for a metered feature its limit, usage and what remains.",
				in:  typeOf[wire.EntitlementCheckArgs](), out: typeOf[wire.Entitlement]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := entitlements.DecodeCheck(c.args)
				if err != nil {
					return nil, err
				}
				res, err := s.checker.Check(c.ctx, c.p.Scope, in.CustomerID, in.FeatureKey, s.now(c.p))
				return wireOf(res, err, entitlements.Result.Wire)
			},
		},
	}
}

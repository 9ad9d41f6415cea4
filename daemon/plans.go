package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// planOperations are subscription plans, which are create-only.
func planOperations() []operation {
	return []operation{{
		pattern: "POST /v1/plans", class: ratelimit.ClassCreate, status: http.StatusCreated,
		doc: apispec.Operation{ID: "createPlan", Tag: "Plans", Summary: "Create a plan",
			Doc:  "Creates a product and its price; send customers its checkout_url. The first successful charge fires subscription.active. Plans are create-only.",
			Body: typeOf[wire.PlanRequest](), Responses: created[wire.Plan]("The plan."),
			Errors: append(invalidErrs(), errs(apperr.AmountTooSmall, apperr.InvalidInterval)...)},
		tool: &toolSpec{name: "create_plan", title: "Create a plan",
			doc: "Creates a subscription plan (a product and its price) and returns it with its hosted checkout_url, the link to send customers. " +
				"Licensed plans charge amount each period; metered plans (usage_type metered) bill each period's usage of a meter, rated with " +
				"pricing_model, up to amount as a cap: create the meter first and pass its id as meter. The first charge fires subscription.active.",
			in: typeOf[wire.PlanRequest](), out: typeOf[wire.Plan]()},
		run: func(s *Server, c *call) (any, error) {
			in, err := plans.Decode(c.args)
			if err != nil {
				return nil, err
			}
			var p plans.Plan
			if c.tx != nil {
				p, err = plans.CreateTx(c.ctx, c.tx, c.p.Scope, in, s.now(c.p))
			} else {
				p, err = plans.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
			}
			return wireOf(p, err, func(p plans.Plan) wire.Plan { return p.Wire(s.baseURL) })
		},
	}}
}

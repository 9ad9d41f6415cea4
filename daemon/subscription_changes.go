package daemon

import (
	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// subscriptionChangeOperations are plan changes: of one subscription, now
// or at its period's end, and of every subscriber of a plan (see the
// subscriptions guide, cmd/help/subscriptions.md).
func subscriptionChangeOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/subscriptions/{id}/change", class: ratelimit.ClassCreate, movesFunds: true,
			doc: apispec.Operation{ID: "changeSubscription", Tag: "Subscriptions", Summary: "Change a subscription's plan",
				Doc: "period_end (default) sets pending_plan_id: the next period starts on the plan, its features then. now (licensed only) " +
					"changes at once: the rest of the period, (new − old) × remaining seconds ÷ period seconds rounded half up, is charged " +
					"(a payment with a proration line) or granted as prepaid credits; features switch at once. The subscription's discount, " +
					"when it covers the current period, applies to the proration as to the period's charge (a discount line; a percent " +
					"also to a credit). The current plan clears a " +
					"pending change. Emits subscription.updated. preview true answers a subscription_change_preview and changes nothing. " +
					"A plan amount above what the payer authorized is authorization_required with checkout_url.",
				Params: idPath("subscription"), Body: typeOf[wire.SubscriptionChangeRequest](),
				Responses: []apispec.Response{{Status: 200, Doc: "The subscription after the change, or with preview, the subscription_change_preview.",
					Schema: func(g *apispec.Generator) apispec.Schema {
						return apispec.Schema{"oneOf": []any{apispec.ResponseOf[wire.Subscription](g), apispec.ResponseOf[wire.SubscriptionChangePreview](g)}}
					}}},
				Errors: append(invalidErrs(), errs(apperr.ResourceNotFound, apperr.PaymentFailed, apperr.AlreadySubscribed,
					apperr.AuthorizationRequired)...)},
			run: func(s *Server, c *call) (any, error) {
				id := subscriptionArg(c)
				in, err := subscriptions.DecodeChange(c.args)
				if err != nil {
					return nil, err
				}
				return s.changeSubscription(c, id, in)
			},
			tools: []*toolSpec{
				{name: "change_subscription", title: "Change a subscription's plan at the period's end",
					doc: "Schedules a subscription's move to another plan of the same usage type (licensed or metered) at the end of its " +
						"current period: pending_plan_id is set, and the next period starts on the plan (its amount charged then, its features " +
						"granted then). The current plan clears a pending change. Emits subscription.updated. A tool never charges now.",
					in: typeOf[wire.ChangeSubscriptionArgs](), out: typeOf[wire.Subscription](),
					run: func(s *Server, c *call) (any, error) {
						id := subscriptionArg(c)
						if at := c.args.String("at", 0, 0); at != nil && *at != subscriptions.AtPeriodEnd {
							c.args.Fail(apperr.Field("at", "a tool changes plans at the period's end only (period_end); an immediate change charges now"))
						}
						in := subscriptions.ChangeInput{Plan: c.args.RequiredString("plan", 1, 255), At: subscriptions.AtPeriodEnd}
						if err := c.args.Err(); err != nil {
							return nil, err
						}
						return s.changeSubscription(c, id, in)
					}},
				{name: "preview_subscription_change", title: "Preview a plan change", idempotent: true, readOnly: true,
					doc: "Answers what moving a subscription to another plan would do, changing nothing: when it takes effect, the " +
						"prorated amount due now or credited (at now, licensed plans), its lines, and the next charge.",
					in: typeOf[wire.PreviewSubscriptionChangeArgs](), out: typeOf[wire.SubscriptionChangePreview](),
					run: func(s *Server, c *call) (any, error) {
						id := subscriptionArg(c)
						in, err := subscriptions.DecodeChange(c.args)
						if err != nil {
							return nil, err
						}
						in.Preview = true
						return s.changeSubscription(c, id, in)
					}},
			},
		},
		{
			pattern: "POST /v1/plans/{id}/migrate", class: ratelimit.ClassCreate,
			doc: apispec.Operation{ID: "migratePlan", Tag: "Plans", Summary: "Move a plan's subscribers to another plan",
				Doc: "Schedules a period_end change to `to` for every trialing, active and past_due subscription of the plan (each emits " +
					"subscription.updated); the answer counts them and sums one period's amounts before and after. A subscription whose " +
					"payer authorized less per period than to's amount is left out, never moved to a price the payer did not authorize: " +
					"authorization_required counts them and needs_authorization lists them (the first 1,000), each with the checkout_url " +
					"where its payer authorizes the new amount (as a change's authorization_required error has); the change is " +
					"scheduled then. A customer who already has a live subscription to `to` is left out. preview true counts, sums and " +
					"lists the same and schedules nothing.",
				Params: idPath("plan"), Body: typeOf[wire.PlanMigrationRequest](), Responses: ok[wire.PlanMigration]("The migration."),
				Errors: append(invalidErrs(), errs(apperr.ResourceNotFound)...)},
			run: func(s *Server, c *call) (any, error) {
				in, err := subscriptions.DecodeMigration(c.args)
				if err != nil {
					return nil, err
				}
				m, err := subscriptions.MigratePlan(c.ctx, s.db, c.tx, c.p.Scope, c.path("id"), in, s.baseURL, s.now(c.p))
				return wireOf(m, err, subscriptions.Migration.Wire)
			},
		},
	}
}

// subscriptionArg is the subscription a call names: the REST path's {id},
// or the tool's id argument (read before the decoder, which then refuses
// any other unknown field).
func subscriptionArg(c *call) string {
	if c.path != nil {
		return c.path("id")
	}
	return c.args.RequiredString("id", 1, 255)
}

// changeSubscription runs a change in the keyed request's transaction, or
// in one of its own.
func (s *Server) changeSubscription(c *call, id string, in subscriptions.ChangeInput) (any, error) {
	env := subscriptions.ChangeEnv{Rail: s.money.railFor, BaseURL: s.baseURL}
	var res subscriptions.ChangeResult
	var err error
	if c.tx != nil {
		res, err = subscriptions.ChangeTx(c.ctx, c.tx, env, c.p.Scope, id, in, s.now(c.p))
	} else {
		res, err = subscriptions.Change(c.ctx, s.db, env, c.p.Scope, id, in, s.now(c.p))
	}
	if err != nil {
		return nil, err
	}
	if res.Preview != nil {
		return *res.Preview, nil
	}
	return res.Subscription.Wire(), nil
}

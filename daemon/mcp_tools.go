package daemon

import (
	"context"
	"reflect"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The tool registry: one entry per tool of the tool server. Each
// entry's run is its REST endpoint's body without the HTTP: the same
// exported decoder (fields from the tool's argument object), the same
// operation, the same Wire form. Schemas come from the entry's in and out
// types through package apispec, like the OpenAPI document's. Besides the
// creates, grants, checks and lists, the registry has the read-only
// get_invoice, get_payment and get_subscription, and advance_test_clock for
// test-mode credentials.

// tool is one entry of the registry.
type tool struct {
	name  string
	title string
	doc   string
	// rest is the route pattern of the REST counterpart.
	rest string
	// write tools need billing:write and are subject to mode_mismatch;
	// the others need billing:read and are read-only.
	write      bool
	idempotent bool
	in         reflect.Type
	// out is the result's wire type; with list, the type of the list
	// envelope's items.
	out  reflect.Type
	list bool
	// testOnly tools are listed for test-mode credentials only.
	testOnly bool
	run      func(s *Server, c toolCall) (any, error)
}

// toolCall is what a tool's run works with.
type toolCall struct {
	ctx  context.Context
	p    auth.Principal
	args *fields.Object
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// toolTable returns the registry, in the order tools/list gives it.
func toolTable() []tool {
	return []tool{
		{
			name: "create_invoice", title: "Create an invoice", rest: "POST /v1/invoices", write: true,
			doc: "Creates a one-time invoice paid in USDC and returns it with its hosted checkout_url, the link to send the customer. " +
				"No money moves until the customer pays there; invoice.paid fires when they do.",
			in: typeOf[wire.InvoiceRequest](), out: typeOf[wire.Invoice](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := invoices.Decode(c.args)
				if err != nil {
					return nil, err
				}
				inv, err := s.invoices.Create(c.ctx, c.p.Scope, in, s.now(c.p))
				return wireOf(inv, err, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
			},
		},
		{
			name: "create_meter", title: "Create a meter", rest: "POST /v1/meters", write: true, idempotent: true,
			doc: "Creates a meter, the named thing usage is recorded against (its key is the event_name of usage events). " +
				"Idempotent by key: a repeat returns the existing meter. Create the meter before a metered plan or feature refers to it.",
			in: typeOf[wire.MeterRequest](), out: typeOf[wire.Meter](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := metering.Decode(c.args)
				if err != nil {
					return nil, err
				}
				m, _, err := metering.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(m, err, metering.Meter.Wire)
			},
		},
		{
			name: "create_feature", title: "Create a feature", rest: "POST /v1/features", write: true, idempotent: true,
			doc: "Creates a feature customers can be entitled to: boolean (on or off) or metered (a meter's usage counts against a granted limit). " +
				"Idempotent by key. A feature must exist before it is granted or checked.",
			in: typeOf[wire.FeatureRequest](), out: typeOf[wire.Feature](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := features.Decode(c.args)
				if err != nil {
					return nil, err
				}
				f, _, err := features.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(f, err, features.Feature.Wire)
			},
		},
		{
			name: "create_meter_event", title: "Record usage", rest: "POST /v1/meter-events", write: true,
			doc: "Records one usage event against the meter whose key is event_name, for a customer. " +
				"With an idempotency_key a retry is safe: the replay returns the stored event with deduplicated true and does not count twice.",
			in: typeOf[wire.MeterEventRequest](), out: typeOf[wire.MeterEvent](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := metering.DecodeEvent(c.args)
				if err != nil {
					return nil, err
				}
				ev, err := s.ingester.IngestEvent(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(ev, err, metering.Event.Wire)
			},
		},
		{
			name: "grant_credits", title: "Grant prepaid credits", rest: "POST /v1/credit_grants", write: true, idempotent: true,
			doc: "Tops up a customer's prepaid credit balance (USDC base units) and emits credit.granted. " +
				"Idempotent with idempotency_key: a repeat returns the first result with deduplicated true.",
			in: typeOf[wire.CreditGrantRequest](), out: typeOf[wire.CreditGrant](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := credits.DecodeGrant(c.args)
				if err != nil {
					return nil, err
				}
				res, err := s.credits.Grant(c.ctx, c.p.Scope, in, s.now(c.p))
				return wireOf(res, err, credits.GrantResult.Wire)
			},
		},
		{
			name: "debit_credits", title: "Debit prepaid credits", rest: "POST /v1/credit_debits", write: true, idempotent: true,
			doc: "Draws down a customer's prepaid credits and emits credit.debited. By default it covers only what the balance allows and " +
				"reports the rest as shortfall; allow_negative lets the balance go below zero. Idempotent with idempotency_key.",
			in: typeOf[wire.CreditDebitRequest](), out: typeOf[wire.CreditDebit](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := credits.DecodeDebit(c.args)
				if err != nil {
					return nil, err
				}
				res, err := s.credits.Debit(c.ctx, c.p.Scope, in, s.now(c.p))
				return wireOf(res, err, credits.DebitResult.Wire)
			},
		},
		{
			name: "get_credit_balance", title: "Get a credit balance", rest: "GET /v1/customers/{customer}/credit_balance",
			doc: "Returns a customer's prepaid credit balance with lifetime granted and consumed (USDC base units, as strings).",
			in:  typeOf[wire.CustomerArgs](), out: typeOf[wire.CreditBalance](),
			run: func(s *Server, c toolCall) (any, error) {
				a, err := wire.DecodeCustomerArgs(c.args)
				if err != nil {
					return nil, err
				}
				id := a.CustomerID
				b, err := credits.GetBalance(c.ctx, s.db, c.p.Scope, id, s.now(c.p))
				return wireOf(b, err, credits.Balance.Wire)
			},
		},
		{
			name: "grant_entitlement", title: "Grant a feature", rest: "POST /v1/entitlement_grants", write: true,
			doc: "Grants a feature to a customer, with a usage limit for a metered feature and an optional end; emits entitlement.granted. " +
				"A new grant replaces the customer's current one for that feature.",
			in: typeOf[wire.EntitlementGrantRequest](), out: typeOf[wire.EntitlementGrant](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := entitlements.Decode(c.args)
				if err != nil {
					return nil, err
				}
				g, err := entitlements.Grant(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(g, err, entitlements.GrantRecord.Wire)
			},
		},
		{
			name: "check_entitlement", title: "Check access to a feature", rest: "GET /v1/customers/{customer}/entitlements/{feature_key}",
			doc: "Answers whether a customer may use a feature now (entitled, with the reason), and for a metered feature its limit, usage and what remains.",
			in:  typeOf[wire.EntitlementCheckArgs](), out: typeOf[wire.Entitlement](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := entitlements.DecodeCheck(c.args)
				if err != nil {
					return nil, err
				}
				res, err := s.checker.Check(c.ctx, c.p.Scope, in.CustomerID, in.FeatureKey, s.now(c.p))
				return wireOf(res, err, entitlements.Result.Wire)
			},
		},
		{
			name: "create_plan", title: "Create a plan", rest: "POST /v1/plans", write: true,
			doc: "Creates a subscription plan (a product and its price) and returns it with its hosted checkout_url, the link to send customers. " +
				"Licensed plans charge amount each period; metered plans (usage_type metered) bill each period's usage of a meter, rated with " +
				"pricing_model, up to amount as a cap: create the meter first and pass its id as meter. The first charge fires subscription.active.",
			in: typeOf[wire.PlanRequest](), out: typeOf[wire.Plan](),
			run: func(s *Server, c toolCall) (any, error) {
				in, err := plans.Decode(c.args)
				if err != nil {
					return nil, err
				}
				p, err := plans.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(p, err, func(p plans.Plan) wire.Plan { return p.Wire(s.baseURL) })
			},
		},
		getTool("get_invoice", "an invoice", "GET /v1/invoices/{id}", "Returns an invoice: its status (open, paid, void) and, once paid, its payment.",
			func(s *Server, c toolCall, id string) (any, error) {
				inv, err := invoices.ByID(c.ctx, s.db, c.p.Scope, id)
				return wireOf(inv, err, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
			}, typeOf[wire.Invoice]()),
		getTool("get_payment", "a payment", "GET /v1/payments/{id}", "Returns a confirmed payment, with how a metered charge was computed (lines).",
			func(s *Server, c toolCall, id string) (any, error) {
				p, err := payments.Get(c.ctx, s.db, c.p.Scope, id)
				return wireOf(p, err, payments.Payment.Wire)
			}, typeOf[wire.Payment]()),
		getTool("get_subscription", "a subscription", "GET /v1/subscriptions/{id}", "Returns a subscription: its status and current period.",
			func(s *Server, c toolCall, id string) (any, error) {
				x, err := subscriptions.Get(c.ctx, s.db, c.p.Scope, id)
				return wireOf(x, err, subscriptions.Subscription.Wire)
			}, typeOf[wire.Subscription]()),
		{
			name: "advance_test_clock", title: "Advance the test clock", rest: "POST /v1/test_helpers/clock/advance", write: true, testOnly: true,
			doc: "Test mode only: moves the merchant's test clock forward (to a date-time, or by a duration such as 30d) and answers once every " +
				"renewal, dunning retry, expiry and credit expiry due by then has run. It moves no real funds.",
			in: typeOf[wire.ClockAdvanceRequest](), out: typeOf[wire.TestClock](),
			run: func(s *Server, c toolCall) (any, error) {
				if err := testclock.CheckMode(c.p.Scope); err != nil {
					return nil, err
				}
				in, err := testclock.DecodeAdvance(c.args)
				if err != nil {
					return nil, err
				}
				now, err := testclock.Advance(c.ctx, s.db, c.p.Scope, in, s.cfg.Clock.Now, s.catchUps()...)
				if err != nil {
					return nil, err
				}
				return testclock.Wire(now), nil
			},
		},
		listTool("list_payments", "payments", "GET /v1/payments", "Lists confirmed payments, newest first.",
			payments.List, func(_ *Server, x payments.Payment) wire.Payment { return x.Wire() }),
		listTool("list_subscriptions", "subscriptions", "GET /v1/subscriptions", "Lists subscriptions, newest first.",
			subscriptions.List, func(_ *Server, x subscriptions.Subscription) wire.Subscription { return x.Wire() }),
		listTool("list_invoices", "invoices", "GET /v1/invoices", "Lists invoices, newest first.",
			invoices.List, func(s *Server, x invoices.Invoice) wire.Invoice { return x.Wire(s.baseURL) }),
		listTool("list_events", "events", "GET /v1/events", "Lists the event feed behind the webhooks (invoice.paid, credit.granted, …), newest first.",
			events.List, func(_ *Server, x events.Event) wire.Event { return x.Wire() }),
		listTool("list_meters", "meters", "GET /v1/meters", "Lists meters, newest first.",
			metering.List, func(_ *Server, x metering.Meter) wire.Meter { return x.Wire() }),
	}
}

// listTool is the entry of a list tool: limit and before, with the list
// endpoint's rules, and the list envelope of wire forms.
func listTool[T, W any](name, noun, rest, doc string,
	fetch func(context.Context, store.Querier, tenant.Scope, page.Params) (page.Result[T], error),
	conv func(*Server, T) W) tool {
	return tool{
		name: name, title: "List " + noun, rest: rest, list: true,
		doc: doc + " Page with limit (1 to 100, default 25) and before (the previous page's next_cursor) until has_more is false.",
		in:  typeOf[wire.ListParams](), out: typeOf[W](),
		run: func(s *Server, c toolCall) (any, error) {
			params, err := page.DecodeArgs(c.args)
			if err != nil {
				return nil, err
			}
			res, err := fetch(c.ctx, s.db, c.p.Scope, params)
			if err != nil {
				return nil, err
			}
			return toList(res, func(x T) W { return conv(s, x) }), nil
		},
	}
}

// getTool is the entry of a read of one object by id.
func getTool(name, noun, rest, doc string, get func(*Server, toolCall, string) (any, error), out reflect.Type) tool {
	return tool{
		name: name, title: "Get " + noun, rest: rest, doc: doc, in: typeOf[wire.ObjectArgs](), out: out,
		run: func(s *Server, c toolCall) (any, error) {
			a, err := wire.DecodeObjectArgs(c.args)
			if err != nil {
				return nil, err
			}
			return get(s, c, a.ID)
		},
	}
}

// wireOf returns v's wire form, or err.
func wireOf[T, W any](v T, err error, conv func(T) W) (any, error) {
	if err != nil {
		return nil, err
	}
	return conv(v), nil
}

package daemon

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// GET /openapi.json: the OpenAPI 3.1 description of every /v1 route of the
// route table, generated from the request types and wire forms the tool
// schemas come from. Every API row of the table needs an entry in
// operations (a test fails otherwise); the table's rate-limit class and
// creates flag add rate_limited and mode_mismatch by themselves.

// openAPI serves the document (no key needed, like /healthz).
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	if s.openapi == nil {
		writeError(w, r, s.log, apperr.New(apperr.Internal, "the API description could not be built; see the daemon's log"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(s.openapi)
}

// OpenAPI returns the API description and the API routes of the route
// table it has no entry for (none, unless a route was added without one).
func (s *Server) OpenAPI() ([]byte, []string, error) {
	doc := apispec.NewDocument(s.baseURL, "tollgate API",
		"Invoicing, subscriptions and usage billing paid in USDC. Amounts are USDC base units (6 decimals: 9000000 is 9.00 USDC), "+
			"sent as integers or strings of digits and returned as strings. Every error is {\"error\":{\"code\",\"message\"}}.", APIVersion)
	for tag, about := range tagDocs {
		doc.Tag(tag, about)
	}
	ops := operations()
	var missing []string
	for _, rt := range s.allRoutes() {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok || rt.api == nil || !strings.HasPrefix(path, "/v1/") {
			continue
		}
		op, ok := ops[rt.pattern]
		if !ok {
			missing = append(missing, rt.pattern)
			continue
		}
		op.Errors = append(op.Errors, errs(apperr.Unauthorized)...)
		if rt.class != "" {
			op.Errors = append(op.Errors, errs(apperr.RateLimited)...)
		}
		if rt.creates {
			op.Errors = append(op.Errors, errs(apperr.ModeMismatch)...)
		}
		doc.Add(method, path, op)
	}
	for _, typ := range events.Types() {
		data, ok := eventData[typ]
		if !ok {
			return nil, nil, fmt.Errorf("openapi: no data type for event %s", typ)
		}
		doc.Webhook(typ, "Sent when "+eventDocs[typ]+".", data)
	}
	raw, err := doc.JSON()
	return raw, missing, err
}

var tagDocs = map[string]string{
	"Invoices":      "One-time invoices paid in USDC at their hosted checkout_url.",
	"Usage":         "Meters and the usage events recorded against them.",
	"Entitlements":  "Features, grants of them to customers, and the access check.",
	"Credits":       "Prepaid credit balances over an append-only ledger.",
	"Payments":      "Confirmed on-chain payments.",
	"Subscriptions": "Customers' subscriptions to plans.",
	"Events":        "The event feed behind the webhooks.",
	"Customers":     "Customers, referenced by id or by your external_customer_id.",
	"Plans":         "Subscription plans: a product and its price, paid at their hosted checkout_url.",
	"Test clocks":   "Test mode's per-merchant clock, moved forward to run renewals, dunning and expiry.",
}

// errs are codes with their statuses from the one status table.
func errs(codes ...apperr.Code) []apispec.ErrorCase {
	out := make([]apispec.ErrorCase, len(codes))
	for i, c := range codes {
		out[i] = apispec.ErrorCase{Status: HTTPStatus(c), Code: string(c)}
	}
	return out
}

var (
	listParams   = reflect.TypeFor[wire.ListParams]()
	customerPath = apispec.Param{Name: "customer", In: "path", Doc: "The customer's id (cus_…)."}
	// unknownCustomerPath is unknown_customer for an {id} in the path.
	unknownCustomerPath = apispec.ErrorCase{Status: http.StatusNotFound, Code: string(apperr.UnknownCustomer)}
	idempotencyHeader   = apispec.Param{Name: "Idempotency-Key", In: "header",
		Doc: "Instead of idempotency_key in the body (a single event only, for meter events); both must agree when both are sent."}
)

func created[T any](doc string) []apispec.Response {
	return []apispec.Response{{Status: 201, Doc: doc, Body: reflect.TypeFor[T]()}}
}

func listed[T any](noun string) []apispec.Response {
	return []apispec.Response{{Status: 200, Doc: "A page of " + noun + ", newest first.", Body: reflect.TypeFor[T](), List: true}}
}

// operations describes each API route, by route pattern.
func operations() map[string]apispec.Operation {
	ops := coreOperations()
	for pattern, op := range moneyOperations() {
		ops[pattern] = op
	}
	return ops
}

// coreOperations describes the routes of invoices, usage, credits,
// entitlements, events and customers.
func coreOperations() map[string]apispec.Operation {
	invalid := errs(apperr.InvalidJSON, apperr.InvalidRequest)
	listErrs := errs(apperr.InvalidRequest)
	return map[string]apispec.Operation{
		"POST /v1/invoices": {ID: "createInvoice", Tag: "Invoices", Summary: "Create an invoice",
			Doc:  "Creates a one-time invoice; send the customer its checkout_url. invoice.paid fires when it is paid.",
			Body: reflect.TypeFor[wire.InvoiceRequest](), Responses: created[wire.Invoice]("The open invoice."), Errors: invalid},
		"GET /v1/invoices": {ID: "listInvoices", Tag: "Invoices", Summary: "List invoices", Query: listParams,
			Responses: listed[wire.Invoice]("invoices"), Errors: listErrs},
		"POST /v1/meters": {ID: "createMeter", Tag: "Usage", Summary: "Create a meter",
			Doc:  "Idempotent by key: a repeat returns the existing meter (201 all the same).",
			Body: reflect.TypeFor[wire.MeterRequest](), Responses: created[wire.Meter]("The meter."), Errors: invalid},
		"GET /v1/meters": {ID: "listMeters", Tag: "Usage", Summary: "List meters", Query: listParams,
			Responses: listed[wire.Meter]("meters"), Errors: listErrs},
		"POST /v1/features": {ID: "createFeature", Tag: "Entitlements", Summary: "Create a feature",
			Doc:  "Idempotent by key: a repeat returns the existing feature (201 all the same).",
			Body: reflect.TypeFor[wire.FeatureRequest](), Responses: created[wire.Feature]("The feature."), Errors: invalid},
		"POST /v1/meter-events": {ID: "createMeterEvents", Tag: "Usage", Summary: "Record usage",
			Doc:    "One event, or a batch {events: […]} of 1 to 500 whose events are accepted or rejected one by one.",
			Params: []apispec.Param{idempotencyHeader},
			BodySchema: func(g *apispec.Generator) apispec.Schema {
				return apispec.Schema{"oneOf": []any{apispec.RequestOf[wire.MeterEventRequest](g), apispec.RequestOf[wire.MeterEventBatchRequest](g)}}
			},
			Responses: []apispec.Response{
				{Status: 201, Doc: "One event, stored.", Body: reflect.TypeFor[wire.MeterEvent]()},
				{Status: 200, Doc: "One event replayed (deduplicated true), or a batch's result: per event, in request order, the stored event or an error.",
					Schema: func(g *apispec.Generator) apispec.Schema {
						return apispec.Schema{"oneOf": []any{apispec.ResponseOf[wire.MeterEvent](g), batchSchema(g)}}
					}},
			},
			Errors: append(invalid, errs(apperr.UnknownMeter, apperr.MissingValue, apperr.UnknownCustomer)...)},
		"POST /v1/credit_grants": {ID: "createCreditGrant", Tag: "Credits", Summary: "Grant prepaid credits",
			Doc: "Emits credit.granted.", Params: []apispec.Param{idempotencyHeader}, Body: reflect.TypeFor[wire.CreditGrantRequest](),
			Responses: []apispec.Response{
				{Status: 201, Doc: "Granted.", Body: reflect.TypeFor[wire.CreditGrant]()},
				{Status: 200, Doc: "A replay of the idempotency key: the first result, deduplicated true.", Body: reflect.TypeFor[wire.CreditGrant]()},
			},
			Errors: append(invalid, errs(apperr.CustomerRequired, apperr.UnknownCustomer)...)},
		"POST /v1/credit_debits": {ID: "createCreditDebit", Tag: "Credits", Summary: "Debit prepaid credits",
			Doc: "Emits credit.debited.", Params: []apispec.Param{idempotencyHeader}, Body: reflect.TypeFor[wire.CreditDebitRequest](),
			Responses: []apispec.Response{{Status: 200, Doc: "Debited (a replay carries deduplicated true).", Body: reflect.TypeFor[wire.CreditDebit]()}},
			Errors:    append(invalid, errs(apperr.CustomerRequired, apperr.UnknownCustomer, apperr.NoCreditAccount)...)},
		"GET /v1/customers/{customer}/credit_balance": {ID: "getCreditBalance", Tag: "Credits", Summary: "Get a credit balance",
			Params:    []apispec.Param{customerPath},
			Responses: []apispec.Response{{Status: 200, Doc: "The balance.", Body: reflect.TypeFor[wire.CreditBalance]()}},
			Errors:    []apispec.ErrorCase{unknownCustomerPath}},
		"GET /v1/payments": {ID: "listPayments", Tag: "Payments", Summary: "List payments", Query: listParams,
			Doc: "Confirmed payments only.", Responses: listed[wire.Payment]("payments"), Errors: listErrs},
		"GET /v1/subscriptions": {ID: "listSubscriptions", Tag: "Subscriptions", Summary: "List subscriptions", Query: listParams,
			Params:    []apispec.Param{{Name: "customer_id", In: "query", Doc: "Only this customer's subscriptions."}},
			Responses: listed[wire.Subscription]("subscriptions"), Errors: listErrs},
		"GET /v1/events": {ID: "listEvents", Tag: "Events", Summary: "List events", Query: listParams,
			Doc: "The feed behind the webhooks, newest first; with after, the events after that position, oldest first (for tailing).",
			Params: []apispec.Param{{Name: "after", In: "query",
				Doc: "An event id or a next_cursor: return the events after it, oldest first; not with before."}},
			Responses: listed[wire.Event]("events"), Errors: listErrs},
		"POST /v1/entitlement_grants": {ID: "createEntitlementGrant", Tag: "Entitlements", Summary: "Grant a feature",
			Doc: "Emits entitlement.granted.", Body: reflect.TypeFor[wire.EntitlementGrantRequest](),
			Responses: created[wire.EntitlementGrant]("The grant."),
			Errors:    append(invalid, errs(apperr.CustomerRequired, apperr.UnknownCustomer, apperr.UnknownFeature)...)},
		"GET /v1/customers/{customer}": {ID: "getCustomer", Tag: "Customers", Summary: "Get a customer",
			Params:    []apispec.Param{{Name: "customer", In: "path", Doc: "The customer's id (cus_…) or your external_customer_id."}},
			Responses: []apispec.Response{{Status: 200, Doc: "The customer.", Body: reflect.TypeFor[wire.Customer]()}},
			Errors:    []apispec.ErrorCase{unknownCustomerPath}},
		"GET /v1/customers/{customer}/entitlements/{feature_key}": {ID: "checkEntitlement", Tag: "Entitlements", Summary: "Check access to a feature",
			Params: []apispec.Param{customerPath, {Name: "feature_key", In: "path", Doc: "The feature's key."}},
			Responses: []apispec.Response{{Status: 200, Doc: "Whether the customer is entitled, and for a metered feature its limit, usage and what remains.",
				Body: reflect.TypeFor[wire.Entitlement]()}},
			Errors: []apispec.ErrorCase{unknownCustomerPath, errs(apperr.UnknownFeature)[0]}},
	}
}

// batchSchema is a meter-events batch result: data holds, per event, a
// meter event or an error item.
func batchSchema(gen *apispec.Generator) apispec.Schema {
	item := apispec.Schema{"oneOf": []any{apispec.ResponseOf[wire.MeterEvent](gen), apispec.ResponseOf[wire.BatchError](gen)}}
	return apispec.Schema{
		"type": "object", "required": []string{"object", "accepted", "rejected", "data"},
		"properties": apispec.Schema{
			"object":   apispec.Schema{"type": "string", "enum": []any{"list"}},
			"accepted": apispec.Schema{"type": "integer"},
			"rejected": apispec.Schema{"type": "integer"},
			"data":     apispec.Schema{"type": "array", "items": item},
		},
	}
}

// eventData is the wire type of each event type's data (nil: not yet
// described).
var eventData = map[string]reflect.Type{
	events.InvoicePaid:                  reflect.TypeFor[wire.Invoice](),
	events.RefundSucceeded:              reflect.TypeFor[wire.Refund](),
	events.SubscriptionActive:           reflect.TypeFor[wire.Subscription](),
	events.SubscriptionRenewed:          reflect.TypeFor[wire.Subscription](),
	events.SubscriptionPaymentFailed:    reflect.TypeFor[wire.Subscription](),
	events.SubscriptionDunningExhausted: reflect.TypeFor[wire.Subscription](),
	events.SubscriptionRevoked:          reflect.TypeFor[wire.Subscription](),
	events.SubscriptionExpired:          reflect.TypeFor[wire.Subscription](),
	events.CreditGranted:                reflect.TypeFor[wire.CreditGrant](),
	events.CreditDebited:                reflect.TypeFor[wire.CreditDebit](),
	events.EntitlementGranted:           reflect.TypeFor[wire.EntitlementGrant](),
}

var eventDocs = map[string]string{
	events.InvoicePaid:                  "a one-time invoice was paid",
	events.RefundSucceeded:              "a refund completed on-chain",
	events.SubscriptionActive:           "a subscription's first charge succeeded (or a metered plan was authorized)",
	events.SubscriptionRenewed:          "a renewal charge succeeded",
	events.SubscriptionPaymentFailed:    "a renewal charge failed; dunning begins",
	events.SubscriptionDunningExhausted: "every renewal retry failed; the subscription is lost",
	events.SubscriptionRevoked:          "the customer revoked the on-chain authorization",
	events.SubscriptionExpired:          "a subscription reached its scheduled end",
	events.CreditGranted:                "credits were granted",
	events.CreditDebited:                "credits were drawn down",
	events.EntitlementGranted:           "a feature was granted",
}

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
// schemas come from: each operation's declaration (operations.go) carries
// its entry, and its rate-limit class and method add rate_limited and
// mode_mismatch by themselves.

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
	ops := operationDocs()
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
	"Coupons":       "Percent or amount off subscriptions' charges, redeemed at checkout or applied to a subscription.",
	"Portal":        "Links to the customer portal, where a customer manages their own subscriptions.",
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
	// keyHeader is the Idempotency-Key of a keyed operation.
	keyHeader = apispec.Param{Name: "Idempotency-Key", In: "header",
		Doc: "Up to 255 characters, chosen by the client (a random UUID, say). A retry with the same key and the same parameters " +
			"answers the first result, status and body, and does nothing again, even when the first answer was lost (a 503 or a " +
			"dropped connection after the write committed). The same key with other parameters is 400 invalid_request. Keys are " +
			"kept per merchant, mode and operation."}
	unrecordedKeyHeader = apispec.Param{Name: "Idempotency-Key", In: "header",
		Doc: "Checked (up to 255 characters) but not recorded: the answer holds a secret that is never stored, so a retry makes " +
			"another session; the first one's link expires unused."}
	idempotencyHeader = apispec.Param{Name: "Idempotency-Key", In: "header",
		Doc: "Instead of idempotency_key in the body (a single event only, for meter events); both must agree when both are sent."}
)

func created[T any](doc string) []apispec.Response {
	return []apispec.Response{{Status: 201, Doc: doc, Body: reflect.TypeFor[T]()}}
}

func ok[T any](doc string) []apispec.Response {
	return []apispec.Response{{Status: 200, Doc: doc, Body: reflect.TypeFor[T]()}}
}

// invalidErrs are the errors of a request body.
func invalidErrs() []apispec.ErrorCase { return errs(apperr.InvalidJSON, apperr.InvalidRequest) }

// idPath is the {id} path parameter of a noun.
func idPath(noun string) []apispec.Param {
	return []apispec.Param{{Name: "id", In: "path", Doc: "The " + noun + "'s id."}}
}

func listed[T any](noun string) []apispec.Response {
	return []apispec.Response{{Status: 200, Doc: "A page of " + noun + ", newest first.", Body: reflect.TypeFor[T](), List: true}}
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
	events.SubscriptionUpdated:          reflect.TypeFor[wire.Subscription](),
	events.SubscriptionTrialWillEnd:     reflect.TypeFor[wire.Subscription](),
	events.CreditGranted:                reflect.TypeFor[wire.CreditGrant](),
	events.CreditDebited:                reflect.TypeFor[wire.CreditDebit](),
	events.EntitlementGranted:           reflect.TypeFor[wire.EntitlementGrant](),
	events.MeterEventCancelled:          reflect.TypeFor[wire.MeterEvent](),
	events.AlertTriggered:               reflect.TypeFor[wire.AlertTrigger](),
}

var eventDocs = map[string]string{
	events.InvoicePaid:                  "a one-time invoice was paid",
	events.RefundSucceeded:              "a refund completed on-chain",
	events.SubscriptionActive:           "a subscription's first charge succeeded (or a metered plan was authorized, or a trial began: status trialing); a trial's first charge at trial_end fires it again",
	events.SubscriptionRenewed:          "a renewal charge succeeded",
	events.SubscriptionPaymentFailed:    "a renewal charge failed; dunning begins",
	events.SubscriptionDunningExhausted: "every renewal retry failed; the subscription is lost",
	events.SubscriptionRevoked:          "the customer revoked the on-chain authorization",
	events.SubscriptionExpired:          "a subscription reached its scheduled end",
	events.SubscriptionUpdated:          "a subscription's plan changed, a change was scheduled or dropped, or its discount was applied or removed",
	events.SubscriptionTrialWillEnd:     "a trial ends in 3 days (at once for a shorter trial); its first charge comes at trial_end",
	events.CreditGranted:                "credits were granted",
	events.CreditDebited:                "credits were drawn down",
	events.EntitlementGranted:           "a feature was granted",
	events.MeterEventCancelled:          "a meter event was cancelled",
	events.AlertTriggered:               "an alert's threshold was crossed",
}

package daemon

import (
	"reflect"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// moneyOperations describes the money path's routes: plans, reads of one
// object, voiding, cancelling, the upcoming charge and the test clock.
func moneyOperations() map[string]apispec.Operation {
	invalid := errs(apperr.InvalidJSON, apperr.InvalidRequest)
	notFound := errs(apperr.ResourceNotFound)
	path := func(noun string) []apispec.Param {
		return []apispec.Param{{Name: "id", In: "path", Doc: "The " + noun + "'s id."}}
	}
	ok := func(doc string, t reflect.Type) []apispec.Response {
		return []apispec.Response{{Status: 200, Doc: doc, Body: t}}
	}
	return map[string]apispec.Operation{
		"POST /v1/plans": {ID: "createPlan", Tag: "Plans", Summary: "Create a plan",
			Doc:  "Creates a product and its price; send customers its checkout_url. The first successful charge fires subscription.active. Plans are create-only.",
			Body: reflect.TypeFor[wire.PlanRequest](), Responses: created[wire.Plan]("The plan."),
			Errors: append(invalid, errs(apperr.AmountTooSmall, apperr.InvalidInterval)...)},
		"GET /v1/invoices/{id}": {ID: "getInvoice", Tag: "Invoices", Summary: "Get an invoice", Params: path("invoice"),
			Responses: ok("The invoice.", reflect.TypeFor[wire.Invoice]()), Errors: notFound},
		"POST /v1/invoices/{id}/void": {ID: "voidInvoice", Tag: "Invoices", Summary: "Void an invoice", Params: path("invoice"),
			Doc:       "An open invoice can no longer be paid; voiding a void invoice again returns it.",
			Responses: ok("The void invoice.", reflect.TypeFor[wire.Invoice]()), Errors: append(notFound, errs(apperr.InvoiceNotOpen)...)},
		"GET /v1/payments/{id}": {ID: "getPayment", Tag: "Payments", Summary: "Get a payment", Params: path("payment"),
			Responses: ok("The payment.", reflect.TypeFor[wire.Payment]()), Errors: notFound},
		"GET /v1/subscriptions/{id}": {ID: "getSubscription", Tag: "Subscriptions", Summary: "Get a subscription", Params: path("subscription"),
			Responses: ok("The subscription.", reflect.TypeFor[wire.Subscription]()), Errors: notFound},
		"POST /v1/subscriptions/{id}/cancel": {ID: "cancelSubscription", Tag: "Subscriptions", Summary: "Cancel a subscription",
			Doc:    "At the period's end (default: sets cancel_at), or now (at_period_end false: expires at once with subscription.expired).",
			Params: path("subscription"), Body: reflect.TypeFor[wire.CancelRequest](),
			Responses: ok("The subscription.", reflect.TypeFor[wire.Subscription]()), Errors: append(invalid, notFound...)},
		"GET /v1/subscriptions/{id}/upcoming": {ID: "getUpcomingCharge", Tag: "Subscriptions", Summary: "Preview the next charge",
			Doc:    "The current period rated so far (metered: with lines; capped), or the next renewal; object upcoming_charge; nothing is charged.",
			Params: path("subscription"), Responses: ok("The upcoming charge.", reflect.TypeFor[wire.Payment]()),
			Errors: append(notFound, errs(apperr.InvalidRequest)...)},
		"GET /v1/test_helpers/clock": {ID: "getTestClock", Tag: "Test clocks", Summary: "Get the test clock",
			Doc:       "Test mode only (a live key is invalid_request).",
			Responses: ok("The clock.", reflect.TypeFor[wire.TestClock]()), Errors: errs(apperr.InvalidRequest)},
		"POST /v1/test_helpers/clock/advance": {ID: "advanceTestClock", Tag: "Test clocks", Summary: "Advance the test clock",
			Doc:  "Moves the merchant's test-mode time forward and answers once every renewal, dunning retry, expiry and credit expiry due by then has run, in time order.",
			Body: reflect.TypeFor[wire.ClockAdvanceRequest](), Responses: ok("The clock at its new time.", reflect.TypeFor[wire.TestClock]()), Errors: invalid},
	}
}

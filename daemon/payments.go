package daemon

import (
	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// paymentOperations are reads of confirmed payments.
func paymentOperations() []operation {
	return []operation{
		listOperation("GET /v1/payments", "list_payments", "payments", "Lists confirmed payments, newest first.",
			apispec.Operation{ID: "listPayments", Tag: "Payments", Summary: "List payments", Query: listParams,
				Doc: "Confirmed payments only.", Responses: listed[wire.Payment]("payments"), Errors: errs(apperr.InvalidRequest)},
			nil, payments.List, func(_ *Server, x payments.Payment) wire.Payment { return x.Wire() }),
		getOperation("GET /v1/payments/{id}", "get_payment", "a payment", "Returns a confirmed payment, with how a metered charge was computed (lines).",
			apispec.Operation{ID: "getPayment", Tag: "Payments", Summary: "Get a payment", Params: idPath("payment"),
				Responses: ok[wire.Payment]("The payment."), Errors: errs(apperr.ResourceNotFound)},
			typeOf[wire.Payment](), func(s *Server, c *call, id string) (any, error) {
				p, err := payments.Get(c.ctx, s.db, c.p.Scope, id)
				return wireOf(p, err, payments.Payment.Wire)
			}),
	}
}

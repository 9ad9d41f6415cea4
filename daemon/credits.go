package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// creditOperations are prepaid credits: grants, debits and the balance.
// Grants and debits take their idempotency key in the body or the
// Idempotency-Key header; both must agree when both are sent.
func creditOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/credit_grants", class: ratelimit.ClassCreate, status: http.StatusCreated, ownKeys: true,
			doc: apispec.Operation{ID: "createCreditGrant", Tag: "Credits", Summary: "Grant prepaid credits",
				Doc: "Emits credit.granted.", Params: []apispec.Param{idempotencyHeader}, Body: typeOf[wire.CreditGrantRequest](),
				Responses: []apispec.Response{
					{Status: 201, Doc: "Granted.", Body: typeOf[wire.CreditGrant]()},
					{Status: 200, Doc: "A replay of the idempotency key: the first result, deduplicated true.", Body: typeOf[wire.CreditGrant]()},
				},
				Errors: append(invalidErrs(), errs(apperr.CustomerRequired, apperr.UnknownCustomer)...)},
			tool: &toolSpec{name: "grant_credits", title: "Grant prepaid credits", idempotent: true,
				doc: "Tops up a customer's prepaid credit balance (USDC base units) and emits credit.granted. " +
					"Idempotent with idempotency_key: a repeat returns the first result with deduplicated true.",
				in: typeOf[wire.CreditGrantRequest](), out: typeOf[wire.CreditGrant]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := credits.DecodeGrant(c.args)
				if err != nil {
					return nil, err
				}
				if in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, c.idempotencyKey); err != nil {
					return nil, err
				}
				res, err := s.credits.Grant(c.ctx, c.p.Scope, in, s.now(c.p))
				c.replayed = err == nil && res.Deduplicated
				return wireOf(res, err, credits.GrantResult.Wire)
			},
		},
		{
			pattern: "POST /v1/credit_debits", class: ratelimit.ClassDebit, ownKeys: true,
			doc: apispec.Operation{ID: "createCreditDebit", Tag: "Credits", Summary: "Debit prepaid credits",
				Doc: "Emits credit.debited.", Params: []apispec.Param{idempotencyHeader}, Body: typeOf[wire.CreditDebitRequest](),
				Responses: []apispec.Response{{Status: 200, Doc: "Debited (a replay carries deduplicated true).", Body: typeOf[wire.CreditDebit]()}},
				Errors:    append(invalidErrs(), errs(apperr.CustomerRequired, apperr.UnknownCustomer, apperr.NoCreditAccount)...)},
			tool: &toolSpec{name: "debit_credits", title: "Debit prepaid credits", idempotent: true,
				doc: "Draws down a customer's prepaid credits and emits credit.debited. By default it covers only what the balance allows and " +
					"reports the rest as shortfall; allow_negative lets the balance go below zero. Idempotent with idempotency_key.",
				in: typeOf[wire.CreditDebitRequest](), out: typeOf[wire.CreditDebit]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := credits.DecodeDebit(c.args)
				if err != nil {
					return nil, err
				}
				if in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, c.idempotencyKey); err != nil {
					return nil, err
				}
				res, err := s.credits.Debit(c.ctx, c.p.Scope, in, s.now(c.p))
				return wireOf(res, err, credits.DebitResult.Wire)
			},
		},
		{
			pattern: "GET /v1/customers/{customer}/credit_balance", class: ratelimit.ClassCreditBalance,
			doc: apispec.Operation{ID: "getCreditBalance", Tag: "Credits", Summary: "Get a credit balance",
				Params:    []apispec.Param{customerPath},
				Responses: ok[wire.CreditBalance]("The balance."),
				Errors:    []apispec.ErrorCase{unknownCustomerPath}},
			tool: &toolSpec{name: "get_credit_balance", title: "Get a credit balance",
				doc: "Returns a customer's prepaid credit balance with lifetime granted and consumed (USDC base units, as strings).",
				in:  typeOf[wire.CustomerArgs](), out: typeOf[wire.CreditBalance]()},
			run: func(s *Server, c *call) (any, error) {
				a, err := wire.DecodeCustomerArgs(c.args)
				if err != nil {
					return nil, err
				}
				b, err := credits.GetBalance(c.ctx, s.db, c.p.Scope, a.CustomerID, s.now(c.p))
				return wireOf(b, err, credits.Balance.Wire)
			},
		},
	}
}

package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// invoiceOperations are one-time invoices: create, list, get and void.
func invoiceOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/invoices", class: ratelimit.ClassCreate, status: http.StatusCreated,
			doc: apispec.Operation{ID: "createInvoice", Tag: "Invoices", Summary: "Create an invoice",
				Doc:  "Creates a one-time invoice; send the customer its checkout_url. invoice.paid fires when it is paid.",
				Body: typeOf[wire.InvoiceRequest](), Responses: created[wire.Invoice]("The open invoice."), Errors: invalidErrs()},
			tool: &toolSpec{name: "create_invoice", title: "Create an invoice",
				doc: "Creates a one-time invoice paid in USDC and returns it with its hosted checkout_url, the link to send the customer. " +
					"No money moves until the customer pays there; invoice.paid fires when they do.",
				in: typeOf[wire.InvoiceRequest](), out: typeOf[wire.Invoice]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := invoices.Decode(c.args)
				if err != nil {
					return nil, err
				}
				var inv invoices.Invoice
				if c.tx != nil {
					inv, err = invoices.Create(c.ctx, c.tx, c.p.Scope, in, s.now(c.p))
				} else {
					// Group commit: concurrent creates share a statement.
					inv, err = s.invoices.Create(c.ctx, c.p.Scope, in, s.now(c.p))
				}
				return wireOf(inv, err, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
			},
		},
		listOperation("GET /v1/invoices", "list_invoices", "invoices", "Lists invoices, newest first.",
			apispec.Operation{ID: "listInvoices", Tag: "Invoices", Summary: "List invoices", Query: listParams,
				Responses: listed[wire.Invoice]("invoices"), Errors: errs(apperr.InvalidRequest)},
			nil, invoices.List, func(s *Server, x invoices.Invoice) wire.Invoice { return x.Wire(s.baseURL) }),
		getOperation("GET /v1/invoices/{id}", "get_invoice", "an invoice", "Returns an invoice: its status (open, paid, void) and, once paid, its payment.",
			apispec.Operation{ID: "getInvoice", Tag: "Invoices", Summary: "Get an invoice", Params: idPath("invoice"),
				Responses: ok[wire.Invoice]("The invoice."), Errors: errs(apperr.ResourceNotFound)},
			typeOf[wire.Invoice](), func(s *Server, c *call, id string) (any, error) {
				inv, err := invoices.ByID(c.ctx, s.db, c.p.Scope, id)
				return wireOf(inv, err, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
			}),
		{
			pattern: "POST /v1/invoices/{id}/void", class: ratelimit.ClassCreate, body: bodyNone,
			doc: apispec.Operation{ID: "voidInvoice", Tag: "Invoices", Summary: "Void an invoice", Params: idPath("invoice"),
				Doc:       "An open invoice can no longer be paid; voiding a void invoice again returns it.",
				Responses: ok[wire.Invoice]("The void invoice."), Errors: errs(apperr.ResourceNotFound, apperr.InvoiceNotOpen)},
			run: func(s *Server, c *call) (any, error) {
				inv, err := invoices.Void(c.ctx, c.q(s), c.p.Scope, c.path("id"), s.now(c.p))
				return wireOf(inv, err, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
			},
		},
	}
}

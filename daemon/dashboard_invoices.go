package daemon

import (
	"context"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
)

const (
	dashInvoicesPage = "pages/dashboard_invoices.html"
	dashInvoicePage  = "pages/dashboard_invoice.html"
)

func (s *Server) dashInvoices(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/invoices", "Invoices", dashInvoicesPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[invoices.Invoice], error) {
		return invoices.List(ctx, s.db, d.Scope(), p)
	})
}

// dashInvoiceView is an invoice's page: the invoice, its checkout link,
// and the payment that paid it (with the customer the payer named).
type dashInvoiceView struct {
	Invoice  invoices.Invoice
	Checkout string
	Payment  *payments.Payment
}

func (s *Server) dashInvoice(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	// Only the session's merchant's invoice, in its mode: any other id is
	// not found.
	inv, err := invoices.ByID(r.Context(), s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v := dashInvoiceView{Invoice: inv, Checkout: inv.Wire(s.baseURL).CheckoutURL}
	if inv.PaymentID != nil {
		p, err := payments.Get(r.Context(), s.db, d.Scope(), *inv.PaymentID)
		if err != nil {
			s.dashFailure(w, r, err)
			return
		}
		v.Payment = &p
	}
	f := d.frame("Invoice "+inv.ID, "Invoices")
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashInvoicePage, f)
}

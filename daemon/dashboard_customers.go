package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/portal"
)

const (
	dashCustomersPage = "pages/dashboard_customers.html"
	dashCustomerPage  = "pages/dashboard_customer.html"
)

// dashCustomerPayments bounds the payments a customer's page lists.
const dashCustomerPayments = 10

func (s *Server) dashCustomers(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/customers", "Customers", dashCustomersPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[customers.Customer], error) {
		return customers.List(ctx, s.db, d.Scope(), p)
	})
}

// dashCustomerView is a customer's page: what its portal shows it (its
// subscriptions, credits, entitlements and usage this period, by the
// portal's reads) and its latest payments.
type dashCustomerView struct {
	Customer      customers.Customer
	Subscriptions []subscriptionView
	HasCredits    bool
	Balance       string
	Ledger        []ledgerRow
	Features      []featureRow
	Meters        []meterUsage
	Payments      []payments.Payment
	MorePayments  bool
}

func (s *Server) dashCustomer(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	// Only the session's merchant's customer, in its mode: any other id is
	// not found (dashFailure).
	c, err := customers.GetForPath(ctx, s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	now, err := s.scopeNow(ctx, d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v, err := s.dashCustomerOf(ctx, d, c, now)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	f := d.frame("Customer "+c.ID, "Customers")
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashCustomerPage, f)
}

func (s *Server) dashCustomerOf(ctx context.Context, d dashRequest, c customers.Customer, now time.Time) (dashCustomerView, error) {
	o := portal.ForCustomer(d.Scope(), c.ID, now)
	v := dashCustomerView{Customer: c}
	subs, err := portal.Subscriptions(ctx, s.db, o)
	if err != nil {
		return v, err
	}
	for _, x := range subs {
		v.Subscriptions = append(v.Subscriptions, subscriptionFacts(x))
	}
	b, err := credits.GetBalance(ctx, s.db, d.Scope(), c.ID, now)
	if err != nil {
		return v, err
	}
	v.HasCredits, v.Balance = b.AccountID != "", creditAmount(b.Balance)
	if v.Ledger, err = s.ledgerRows(ctx, o); err != nil {
		return v, err
	}
	if v.Features, err = s.featureRows(ctx, o); err != nil {
		return v, err
	}
	if v.Meters, err = s.meterUsages(ctx, o); err != nil {
		return v, err
	}
	ps, err := payments.ListForCustomer(ctx, s.db, d.Scope(), c.ID, page.Params{Limit: dashCustomerPayments})
	if err != nil {
		return v, err
	}
	v.Payments, v.MorePayments = ps.Items, ps.HasMore
	return v, nil
}

package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// decodeBody reads and parses the request body as a JSON object.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request) (*fields.Object, error) {
	body, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	return fields.Decode(body)
}

// invoiceInput reads POST /v1/invoices' schema (shared with the MCP tool).
func invoiceInput(o *fields.Object) (invoices.Input, error) {
	in := invoices.Input{
		Amount:        o.RequiredAmount("amount"),
		Description:   o.RequiredString("description", 0, 0),
		Memo:          o.String("memo", 0, 0),
		InvoiceNumber: o.String("invoice_number", 0, 0),
		Recipient:     o.String("recipient", 0, 0),
		DueAt:         o.Time("due_at"),
	}
	return in, o.Err()
}

func (s *Server) createInvoice(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := invoiceInput(o)
	if err != nil {
		return err
	}
	inv, err := invoices.Create(r.Context(), s.db, p.Scope, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.invoiceJSON(inv))
	return nil
}

func (s *Server) listInvoices(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(func(r *http.Request, p auth.Principal, params page.Params) (page.Result[invoices.Invoice], error) {
		return invoices.List(r.Context(), s.db, p.Scope, params)
	}, s.invoiceJSON)(w, r, p)
}

// meterInput reads POST /v1/meters' schema (shared with the MCP tool).
func meterInput(o *fields.Object) (metering.Input, error) {
	in := metering.Input{
		Key:           o.RequiredString("key", 0, 0),
		DisplayName:   o.RequiredString("display_name", 0, 0),
		EventValueKey: o.String("event_value_key", 0, 0),
		UnitLabel:     o.String("unit_label", 0, 0),
		Description:   o.String("description", 0, 0),
	}
	if a := o.String("aggregation", 0, 0); a != nil {
		in.Aggregation = *a
	}
	return in, o.Err()
}

func (s *Server) createMeter(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := meterInput(o)
	if err != nil {
		return err
	}
	m, _, err := metering.Create(r.Context(), s.db, p.Scope, in)
	if err != nil {
		return err
	}
	// A repeat of an existing key returns that meter with the same status:
	// the spec documents 201 for the endpoint, and idempotent means a retry
	// cannot tell the difference.
	writeJSON(w, http.StatusCreated, meterToJSON(m))
	return nil
}

// list serves a GET list endpoint from a domain List function.
func list[T, W any](fetch func(r *http.Request, p auth.Principal, params page.Params) (page.Result[T], error), conv func(T) W) apiFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		params, err := page.ParseQuery(r.URL.Query())
		if err != nil {
			return err
		}
		res, err := fetch(r, p, params)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, toList(res, conv))
		return nil
	}
}

func (s *Server) listMeters(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(func(r *http.Request, p auth.Principal, params page.Params) (page.Result[metering.Meter], error) {
		return metering.List(r.Context(), s.db, p.Scope, params)
	}, meterToJSON)(w, r, p)
}

func (s *Server) listPayments(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(func(r *http.Request, p auth.Principal, params page.Params) (page.Result[payments.Payment], error) {
		return payments.List(r.Context(), s.db, p.Scope, params)
	}, paymentToJSON)(w, r, p)
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(func(r *http.Request, p auth.Principal, params page.Params) (page.Result[subscriptions.Subscription], error) {
		return subscriptions.List(r.Context(), s.db, p.Scope, params)
	}, subscriptionToJSON)(w, r, p)
}

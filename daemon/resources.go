package daemon

import (
	"bytes"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Handlers are adapters: decode the request, make one domain call, encode
// its wire form. Validation, transactions and events are the domain's.

// decodeBody reads and parses the request body as a JSON object.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request) (*fields.Object, error) {
	body, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	return fields.Decode(body)
}

// decodeOptionalBody is decodeBody where an empty body means {}.
func (s *Server) decodeOptionalBody(w http.ResponseWriter, r *http.Request) (*fields.Object, error) {
	body, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return fields.FromMap(nil), nil
	}
	return fields.Decode(body)
}

func (s *Server) createInvoice(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := invoices.Decode(o)
	if err != nil {
		return err
	}
	inv, err := s.invoices.Create(r.Context(), p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, inv.Wire(s.baseURL))
	return nil
}

func (s *Server) listInvoices(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(w, r, func(params page.Params) (page.Result[invoices.Invoice], error) {
		return invoices.List(r.Context(), s.db, p.Scope, params)
	}, func(i invoices.Invoice) wire.Invoice { return i.Wire(s.baseURL) })
}

func (s *Server) createMeter(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := metering.Decode(o)
	if err != nil {
		return err
	}
	m, _, err := metering.Create(r.Context(), s.db, p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	// A repeat of an existing key returns that meter with the same status:
	// the spec documents 201 for the endpoint, and idempotent means a retry
	// cannot tell the difference.
	writeJSON(w, http.StatusCreated, m.Wire())
	return nil
}

// list serves a GET list endpoint: it parses limit and before, fetches a
// page and encodes each item.
func list[T, W any](w http.ResponseWriter, r *http.Request, fetch func(page.Params) (page.Result[T], error), conv func(T) W) error {
	params, err := page.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	res, err := fetch(params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(res, conv))
	return nil
}

// toList builds the list envelope of a page.
func toList[T, W any](r page.Result[T], conv func(T) W) wire.List {
	data := make([]W, len(r.Items))
	for i, it := range r.Items {
		data[i] = conv(it)
	}
	l := wire.List{Object: "list", Data: data, HasMore: r.HasMore}
	if r.Next != nil {
		c := r.Next.String()
		l.NextCursor = &c
	}
	return l
}

func (s *Server) listMeters(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(w, r, func(params page.Params) (page.Result[metering.Meter], error) {
		return metering.List(r.Context(), s.db, p.Scope, params)
	}, metering.Meter.Wire)
}

func (s *Server) listPayments(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(w, r, func(params page.Params) (page.Result[payments.Payment], error) {
		return payments.List(r.Context(), s.db, p.Scope, params)
	}, payments.Payment.Wire)
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(w, r, func(params page.Params) (page.Result[subscriptions.Subscription], error) {
		return subscriptions.List(r.Context(), s.db, p.Scope, params)
	}, subscriptions.Subscription.Wire)
}

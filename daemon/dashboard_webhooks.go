package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

const dashEndpointPage = "pages/dashboard_endpoint.html"

// dashEndpointView is an endpoint's page: the endpoint and one page of its
// deliveries, newest first.
type dashEndpointView struct {
	Endpoint   webhooks.Endpoint
	Deliveries []webhooks.Delivery
	Next       string
}

// sessionEndpoint is the endpoint named by the path, when it is the
// session's merchant's in the session's mode; any other id is not found.
func (s *Server) sessionEndpoint(r *http.Request, d dashRequest) (webhooks.Endpoint, error) {
	e, err := webhooks.Get(r.Context(), s.db, r.PathValue("id"))
	if err == nil && (e.MerchantID != d.MerchantID || e.Mode != d.Mode) || apperr.CodeOf(err) == apperr.InvalidRequest {
		return webhooks.Endpoint{}, apperr.New(apperr.ResourceNotFound, "no such endpoint")
	}
	e.Secret = "" // never on a page after the one that made it
	return e, err
}

// dashEndpoint is an endpoint's deliveries, cursor-paged like the lists,
// read with the function admin deliveries list reads them with.
func (s *Server) dashEndpoint(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	e, err := s.sessionEndpoint(r, d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	p, err := page.ParseQuery(r.URL.Query())
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	rows, err := webhooks.ListDeliveries(r.Context(), s.db, webhooks.Filter{MerchantID: d.MerchantID, Mode: d.Mode, EndpointID: e.ID,
		Before: p.Before, Limit: p.Limit + 1})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	res := page.Build(rows, p, webhooks.Delivery.Position)
	v := dashEndpointView{Endpoint: e, Deliveries: res.Items}
	if res.Next != nil {
		v.Next = d.base + "/webhooks/" + e.ID + "?before=" + res.Next.String()
	}
	f := d.frame("Endpoint "+e.ID, "Developers")
	f.Notice = doneNotice(r)
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashEndpointPage, f)
}

// dashDeliveryResend sends one delivery of one of the session's endpoints
// again, as admin deliveries retry DELIVERY_ID does; a delivery of another
// endpoint, merchant or mode is not found.
func (s *Server) dashDeliveryResend(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	e, err := s.sessionEndpoint(r, d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	deliveryID := r.PathValue("delivery")
	err = audit.ChangeRow(r.Context(), s.db, d.actor(), d.scope(), "webhook_deliveries", deliveryID, audit.DeliveryRetry, func(tx *store.Tx) error {
		x, _, err := webhooks.GetDelivery(r.Context(), tx, deliveryID)
		if err != nil || x.EndpointID != e.ID {
			return apperr.New(apperr.ResourceNotFound, "no such delivery")
		}
		_, err = webhooks.Retry(r.Context(), tx, webhooks.RetryInput{DeliveryID: deliveryID})
		return err
	})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base+"/webhooks/"+e.ID, "resent")
}

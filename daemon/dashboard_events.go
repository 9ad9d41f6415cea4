package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

const (
	dashEventsPage = "pages/dashboard_events.html"
	dashEventPage  = "pages/dashboard_event.html"
)

func (s *Server) dashEvents(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/events", "Events", dashEventsPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[events.Event], error) {
		return events.List(ctx, s.db, d.Scope(), p)
	})
}

// dashEventView is an event's page: its data and each delivery with its
// attempts.
type dashEventView struct {
	Event      events.Event
	Data       string
	Deliveries []dashDeliveryView
}

type dashDeliveryView struct {
	webhooks.Delivery
	Attempts []webhooks.Attempt
}

func (s *Server) dashEvent(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	e, err := events.Get(r.Context(), s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v := dashEventView{Event: e, Data: string(e.Data)}
	var pretty bytes.Buffer
	if json.Indent(&pretty, e.Data, "", "  ") == nil {
		v.Data = pretty.String()
	}
	ds, err := webhooks.ListDeliveries(r.Context(), s.db, webhooks.Filter{MerchantID: d.MerchantID, EventID: e.ID})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	for _, x := range ds {
		_, as, err := webhooks.GetDelivery(r.Context(), s.db, x.ID)
		if err != nil {
			s.dashFailure(w, r, err)
			return
		}
		v.Deliveries = append(v.Deliveries, dashDeliveryView{Delivery: x, Attempts: as})
	}
	f := d.frame("Event "+e.ID, "Events")
	f.Notice = doneNotice(r)
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashEventPage, f)
}

// dashResend sends every delivery of one of the session's events again, as
// admin deliveries retry --event does.
func (s *Server) dashResend(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	eventID := r.PathValue("id")
	err := audit.ChangeRow(r.Context(), s.db, d.actor(), d.scope(), "events", eventID, audit.DeliveryRetry, func(tx *store.Tx) error {
		_, err := webhooks.Retry(r.Context(), tx, webhooks.RetryInput{EventID: eventID, MerchantID: d.MerchantID})
		return err
	})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base+"/events/"+eventID, "resent")
}

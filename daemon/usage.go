package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/alerts"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
)

// Usage summaries, meter event cancellation and alerts: GET
// /v1/customers/{id}/usage, POST /v1/meter-events/{id}/cancel, POST and GET
// /v1/alerts and POST /v1/alerts/{id}/archive.

func (s *Server) getUsage(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	in, err := metering.ParseUsageQuery(r.URL.Query())
	if err != nil {
		return err
	}
	u, err := metering.Usage(r.Context(), s.db, p.Scope, r.PathValue("customer"), in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u.Wire())
	return nil
}

func (s *Server) cancelMeterEvent(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	e, err := metering.Cancel(r.Context(), s.db, p.Scope, r.PathValue("id"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e.Wire())
	return nil
}

func (s *Server) createAlert(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := alerts.Decode(o)
	if err != nil {
		return err
	}
	a, err := alerts.Create(r.Context(), s.db, p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a.Wire())
	return nil
}

func (s *Server) listAlerts(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return list(w, r, func(params page.Params) (page.Result[alerts.Alert], error) {
		return alerts.List(r.Context(), s.db, p.Scope, params)
	}, alerts.Alert.Wire)
}

func (s *Server) archiveAlert(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	a, err := alerts.Archive(r.Context(), s.db, p.Scope, r.PathValue("id"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.Wire())
	return nil
}

package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// createMeterEvents serves POST /v1/meter-events: one event (201, or 200
// when it replays an idempotency key), or a batch whose items are accepted
// or rejected one by one (200).
func (s *Server) createMeterEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	body, err := readBody(w, r, s.cfg.MaxBatchBodyBytes)
	if err != nil {
		return err
	}
	req, err := metering.DecodeRequest(body)
	if err != nil {
		return err
	}
	if err := req.ApplyIdempotencyKey(r.Header.Get("Idempotency-Key")); err != nil {
		return err
	}
	out, err := s.ingester.IngestRequest(r.Context(), s.db, p.Scope, req, s.now(p))
	if err != nil {
		return err
	}
	if req.Batch {
		writeJSON(w, http.StatusOK, out.Wire())
		return nil
	}
	ev, err := out.Event()
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if ev.Deduplicated {
		status = http.StatusOK
	}
	writeJSON(w, status, ev.Wire())
	return nil
}

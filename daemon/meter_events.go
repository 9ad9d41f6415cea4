package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// meterEventOperations record usage: one event, or over REST a batch.
func meterEventOperations() []operation {
	return []operation{{
		pattern: "POST /v1/meter-events", class: ratelimit.ClassMeterEvents, ownKeys: true, rest: (*Server).createMeterEvents,
		doc: apispec.Operation{ID: "createMeterEvents", Tag: "Usage", Summary: "Record usage",
			Doc:    "One event, or a batch {events: […]} of 1 to 500 whose events are accepted or rejected one by one.",
			Params: []apispec.Param{idempotencyHeader},
			BodySchema: func(g *apispec.Generator) apispec.Schema {
				return apispec.Schema{"oneOf": []any{apispec.RequestOf[wire.MeterEventRequest](g), apispec.RequestOf[wire.MeterEventBatchRequest](g)}}
			},
			Responses: []apispec.Response{
				{Status: 201, Doc: "One event, stored.", Body: typeOf[wire.MeterEvent]()},
				{Status: 200, Doc: "One event replayed (deduplicated true), or a batch's result: per event, in request order, the stored event or an error.",
					Schema: func(g *apispec.Generator) apispec.Schema {
						return apispec.Schema{"oneOf": []any{apispec.ResponseOf[wire.MeterEvent](g), batchSchema(g)}}
					}},
			},
			Errors: append(invalidErrs(), errs(apperr.UnknownMeter, apperr.MissingValue, apperr.UnknownCustomer)...)},
		tool: &toolSpec{name: "create_meter_event", title: "Record usage",
			doc: "Records one usage event against the meter whose key is event_name, for a customer. " +
				"With an idempotency_key a retry is safe: the replay returns the stored event with deduplicated true and does not count twice.",
			in: typeOf[wire.MeterEventRequest](), out: typeOf[wire.MeterEvent]()},
		run: func(s *Server, c *call) (any, error) {
			in, err := metering.DecodeEvent(c.args)
			if err != nil {
				return nil, err
			}
			ev, err := s.ingester.IngestEvent(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
			return wireOf(ev, err, metering.Event.Wire)
		},
	}}
}

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
		// Written without reflection (wire.MeterEventBatch.AppendJSON), the
		// same bytes as writeJSON.
		b, err := out.Wire().AppendJSON(make([]byte, 0, 512*len(out.Results)))
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
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

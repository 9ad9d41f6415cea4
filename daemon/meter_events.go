package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// createMeterEvents serves POST /v1/meter-events: one event, or a batch
// whose items are accepted or rejected one by one.
func (s *Server) createMeterEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	body, err := readBody(w, r, s.cfg.MaxBatchBodyBytes)
	if err != nil {
		return err
	}
	req, err := metering.DecodeRequest(body)
	if err != nil {
		return err
	}
	if err := applyIdempotencyHeader(&req, r.Header.Get("Idempotency-Key")); err != nil {
		return err
	}
	// Only decodable events go to the database; idx maps them back.
	var valid []metering.EventInput
	var idx []int
	for i, e := range req.Errs {
		if e == nil {
			valid = append(valid, req.Events[i])
			idx = append(idx, i)
		}
	}
	results := make([]metering.Result, len(req.Events))
	if len(valid) > 0 {
		stored, err := s.ingester.Ingest(r.Context(), s.db, p.Scope, valid, s.now(p))
		if err != nil {
			return err
		}
		for k, res := range stored {
			results[idx[k]] = res
		}
	}
	for i, e := range req.Errs {
		if e != nil {
			results[i].Err = e
		}
	}
	if !req.Batch {
		if err := results[0].Err; err != nil {
			return err
		}
		status := http.StatusCreated
		if results[0].Event.Deduplicated {
			status = http.StatusOK
		}
		writeJSON(w, status, results[0].Event.Wire())
		return nil
	}
	writeJSON(w, http.StatusOK, batchWire(results))
	return nil
}

// applyIdempotencyHeader gives a single event the Idempotency-Key header;
// a batch must key each event in its body instead.
func applyIdempotencyHeader(req *metering.Request, header string) error {
	if header == "" {
		return nil
	}
	if req.Batch {
		return apperr.Field("Idempotency-Key", "applies to a single event; give each event of a batch its own idempotency_key")
	}
	if k := req.Events[0].IdempotencyKey; k != nil && *k != header {
		return apperr.Field("idempotency_key", "differs from the Idempotency-Key header; send one or the other")
	}
	req.Events[0].IdempotencyKey = &header
	return nil
}

// batchWire is the answer to a batch: per event, in request order, the
// stored event or its error.
func batchWire(results []metering.Result) wire.MeterEventBatch {
	out := wire.MeterEventBatch{Object: "list", Data: make([]any, len(results))}
	for i, res := range results {
		if res.Err == nil {
			out.Accepted++
			out.Data[i] = res.Event.Wire()
			continue
		}
		out.Rejected++
		ae, ok := apperr.As(res.Err)
		if !ok {
			// A database failure fails the request, so this is a bug.
			ae = apperr.New(apperr.Internal, "internal error")
		}
		out.Data[i] = wire.BatchError{Object: "error", Index: i, Error: wire.ErrorDetail{Code: string(ae.Code), Message: ae.Message}}
	}
	return out
}

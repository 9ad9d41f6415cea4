package metering

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The request-level operation of POST /v1/meter-events and the
// create_meter_event tool: decode (DecodeRequest, or DecodeEvent and
// Single), the idempotency key's rules (ApplyIdempotencyKey), one call
// (IngestRequest or IngestEvent) and the answer (Outcome.Event,
// Outcome.Wire). Adapters add only what is theirs: the body limit, the
// Idempotency-Key header, the status.

// Request is a decoded POST /v1/meter-events body: one event, or a batch
// whose items failed to decode are rejected one by one (Errs[i] set) while
// the others go on.
type Request struct {
	Batch  bool
	Events []EventInput
	Errs   []error
}

// Single is the request of one event already decoded (for example from
// the create_meter_event tool's arguments by DecodeEvent).
func Single(in EventInput) Request {
	return Request{Events: []EventInput{in}, Errs: []error{nil}}
}

// DecodeRequest parses a meter-events body: one event, or {"events":[…]}
// with 1 to MaxBatch events. A body that is not JSON is invalid_json; a
// malformed envelope (or, for one event, a bad field) is the error.
func DecodeRequest(body []byte) (Request, error) {
	if req, ok := decodeBatchFast(body); ok {
		return req, nil
	}
	return decodeGeneral(body)
}

// decodeGeneral is DecodeRequest for any body.
func decodeGeneral(body []byte) (Request, error) {
	o, err := fields.Decode(body)
	if err != nil {
		return Request{}, err
	}
	if !o.Has("events") {
		in, err := DecodeEvent(o)
		if err != nil {
			return Request{}, err
		}
		return Single(in), nil
	}
	items, errs, ok := o.Objects("events", 1, MaxBatch)
	if err := o.Err(); err != nil || !ok {
		return Request{Batch: true}, err
	}
	req := Request{Batch: true, Events: make([]EventInput, len(items)), Errs: errs}
	for i, item := range items {
		if item != nil {
			req.Events[i], req.Errs[i] = DecodeEvent(item)
		}
	}
	return req, nil
}

// ApplyIdempotencyKey gives a single event the key of a request's
// Idempotency-Key header (empty when absent), by fields.MergeIdempotencyKey. A
// batch keys each event in its body instead: a header with a batch is
// invalid_request naming Idempotency-Key.
func (r *Request) ApplyIdempotencyKey(header string) error {
	if header == "" {
		return nil
	}
	if r.Batch {
		return apperr.Field("Idempotency-Key", "applies to a single event; give each event of a batch its own idempotency_key")
	}
	k, err := fields.MergeIdempotencyKey(r.Events[0].IdempotencyKey, header)
	if err != nil {
		return err
	}
	r.Events[0].IdempotencyKey = k
	return nil
}

// Outcome is what a request came to: one Result per event, in request
// order.
type Outcome struct {
	Batch   bool
	Results []Result
}

// IngestRequest stores a request's events, received at now, through Ingest
// (one transaction, retried on deadlocks) and returns one Result per event
// in request order: an event that failed to decode keeps its decode error
// and is not sent to the database. The error is non-nil only when the
// database fails.
func (g *Ingester) IngestRequest(ctx context.Context, db *store.DB, s tenant.Scope, req Request, now time.Time) (Outcome, error) {
	out := Outcome{Batch: req.Batch, Results: make([]Result, len(req.Events))}
	// Only decodable events go to the database; idx maps them back.
	var valid []EventInput
	var idx []int
	for i, e := range req.Errs {
		if e == nil {
			valid = append(valid, req.Events[i])
			idx = append(idx, i)
		}
	}
	if len(valid) > 0 {
		stored, err := g.Ingest(ctx, db, s, valid, now)
		if err != nil {
			return Outcome{}, err
		}
		for k, res := range stored {
			out.Results[idx[k]] = res
		}
	}
	for i, e := range req.Errs {
		if e != nil {
			out.Results[i].Err = e
		}
	}
	return out, nil
}

// IngestEvent is IngestRequest for one event: the stored event (the
// original one, Deduplicated, on a replay of its idempotency key) or the
// error that refused it (invalid_request, unknown_meter, missing_value,
// unknown_customer), or a database failure.
func (g *Ingester) IngestEvent(ctx context.Context, db *store.DB, s tenant.Scope, in EventInput, now time.Time) (Event, error) {
	out, err := g.IngestRequest(ctx, db, s, Single(in), now)
	if err != nil {
		return Event{}, err
	}
	return out.Event()
}

// Event returns the first event's outcome: for a single-event request, the
// stored event or the error that refused it.
func (o Outcome) Event() (Event, error) {
	if len(o.Results) == 0 {
		return Event{}, apperr.New(apperr.Internal, "internal error")
	}
	r := o.Results[0]
	return r.Event, r.Err
}

// Wire is the answer to a batch: per event, in request order, the stored
// event or its error, with the counts of each.
func (o Outcome) Wire() wire.MeterEventBatch {
	out := wire.MeterEventBatch{Object: "list", Data: make([]any, len(o.Results))}
	var ts, created stampMemo
	for i, res := range o.Results {
		if res.Err == nil {
			out.Accepted++
			out.Data[i] = res.Event.wire(&ts, &created)
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

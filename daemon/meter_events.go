package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

type meterEventJSON struct {
	Object         string          `json:"object"`
	ID             string          `json:"id"`
	Meter          string          `json:"meter"`
	CustomerID     *string         `json:"customer_id"`
	Value          string          `json:"value"`
	EventTimestamp string          `json:"event_timestamp"`
	IdempotencyKey *string         `json:"idempotency_key"`
	Properties     json.RawMessage `json:"properties,omitempty"`
	CreatedAt      string          `json:"created_at"`
	Livemode       bool            `json:"livemode"`
	Deduplicated   bool            `json:"deduplicated"`
}

func meterEventToJSON(e metering.Event) meterEventJSON {
	return meterEventJSON{
		Object: "meter_event", ID: e.ID, Meter: e.MeterKey, CustomerID: e.CustomerID, Value: strconv.FormatInt(e.Value, 10),
		EventTimestamp: timestamp(e.Timestamp), IdempotencyKey: e.IdempotencyKey, Properties: e.Properties,
		CreatedAt: timestamp(e.CreatedAt), Livemode: e.Mode == tenant.Live, Deduplicated: e.Deduplicated,
	}
}

// batchErrorJSON is a rejected event inside a batch result (DESIGN.md).
type batchErrorJSON struct {
	Object string    `json:"object"`
	Index  int       `json:"index"`
	Error  errorJSON `json:"error"`
}

type errorJSON struct {
	Code    apperr.Code `json:"code"`
	Message string      `json:"message"`
}

type batchJSON struct {
	Object   string `json:"object"`
	Accepted int    `json:"accepted"`
	Rejected int    `json:"rejected"`
	Data     []any  `json:"data"`
}

// meterEventInput reads one event of POST /v1/meter-events (shared with the
// MCP tool).
func meterEventInput(o *fields.Object) (metering.EventInput, error) {
	in := metering.EventInput{
		EventName:          o.RequiredString("event_name", 0, 0),
		CustomerID:         o.String("customer_id", 0, 0),
		ExternalCustomerID: o.String("external_customer_id", 0, 0),
		Timestamp:          o.Time("timestamp"),
		IdempotencyKey:     o.String("idempotency_key", 0, 0),
		Properties:         o.Raw("properties"),
	}
	if raw := o.Raw("value"); raw != nil {
		v, err := metering.ParseValue("value", raw)
		if err != nil {
			o.Fail(err)
		}
		in.Value = &v
	}
	return in, o.Err()
}

// decodeMeterEvents parses a meter-events body: one event, or {events:[…]}
// of 1 to MaxBatch. For a batch, errs[i] is set for an event that could not
// be decoded (it is rejected alone); a malformed envelope is the error.
// header is the Idempotency-Key header, which only a single event may use.
func decodeMeterEvents(body []byte, header string) (ins []metering.EventInput, errs []error, batch bool, err error) {
	o, err := fields.Decode(body)
	if err != nil {
		return nil, nil, false, err
	}
	if !o.Has("events") {
		in, err := meterEventInput(o)
		if err != nil {
			return nil, nil, false, err
		}
		if header != "" {
			if in.IdempotencyKey != nil && *in.IdempotencyKey != header {
				return nil, nil, false, apperr.Field("idempotency_key", "differs from the Idempotency-Key header; send one or the other")
			}
			in.IdempotencyKey = &header
		}
		return []metering.EventInput{in}, []error{nil}, false, nil
	}
	raw := o.Raw("events")
	if err := o.Err(); err != nil {
		return nil, nil, true, err
	}
	if header != "" {
		return nil, nil, true, apperr.Field("Idempotency-Key", "applies to a single event; give each event of a batch its own idempotency_key")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 || len(items) > metering.MaxBatch {
		return nil, nil, true, apperr.Field("events", "must be an array of 1 to %d events", metering.MaxBatch)
	}
	ins = make([]metering.EventInput, len(items))
	errs = make([]error, len(items))
	for i, item := range items {
		// The body is valid JSON already: each item is decoded once, into
		// its fields, rather than validated and parsed again.
		var m map[string]json.RawMessage
		if t := bytes.TrimSpace(item); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
			errs[i] = apperr.Field("events", "each event must be a JSON object")
			continue
		}
		ins[i], errs[i] = meterEventInput(fields.FromMap(m))
	}
	return ins, errs, true, nil
}

func (s *Server) createMeterEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	body, err := readBody(w, r, s.cfg.MaxBatchBodyBytes)
	if err != nil {
		return err
	}
	ins, errs, batch, err := decodeMeterEvents(body, r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	// Only decodable events go to the database; idx maps them back.
	var valid []metering.EventInput
	var idx []int
	for i, e := range errs {
		if e == nil {
			valid = append(valid, ins[i])
			idx = append(idx, i)
		}
	}
	var results []metering.Result
	if len(valid) > 0 {
		results, err = ingest(r.Context(), s.db, p.Scope, valid, time.Now())
		if err != nil {
			return err
		}
		for k, res := range results {
			errs[idx[k]] = res.Err
		}
	}
	if !batch {
		if errs[0] != nil {
			return errs[0]
		}
		status := http.StatusCreated
		if results[0].Event.Deduplicated {
			status = http.StatusOK
		}
		writeJSON(w, status, meterEventToJSON(results[0].Event))
		return nil
	}
	out := batchJSON{Object: "list", Data: make([]any, len(ins))}
	for k, i := range idx {
		if results[k].Err == nil {
			out.Data[i] = meterEventToJSON(results[k].Event)
		}
	}
	for i, e := range errs {
		if e == nil {
			out.Accepted++
			continue
		}
		out.Rejected++
		ae, ok := apperr.As(e)
		if !ok {
			// A database failure fails the request, so this is a bug.
			ae = apperr.New(apperr.Internal, "internal error")
		}
		out.Data[i] = batchErrorJSON{Object: "error", Index: i, Error: errorJSON{Code: ae.Code, Message: ae.Message}}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ingest runs metering.Ingest in a transaction, retried when PostgreSQL
// breaks a deadlock or a serialization conflict: the batch is written
// again from scratch, and keys already stored deduplicate as usual.
func ingest(ctx context.Context, db *sqlx.DB, sc tenant.Scope, ins []metering.EventInput, now time.Time) ([]metering.Result, error) {
	var results []metering.Result
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = store.Tx(ctx, db, func(tx *sqlx.Tx) error {
			var ierr error
			results, ierr = metering.Ingest(ctx, tx, sc, ins, now)
			return ierr
		})
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || (pqErr.Code != "40P01" && pqErr.Code != "40001") {
			break
		}
	}
	return results, err
}

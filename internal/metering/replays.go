package metering

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// replays compares each event of res listed in idx, whose key is stored
// already, with the stored original: the same event becomes the original,
// marked Deduplicated; a different one is invalid_request naming
// idempotency_key. It is a separate statement from the write: a key
// committed by a concurrent request while the write waited on it is
// invisible to the write's own snapshot.
func replays(ctx context.Context, q store.Querier, s tenant.Scope, res []Result, idx []int, stamped []bool) error {
	if len(idx) == 0 {
		return nil
	}
	keys := make([]string, len(idx))
	props := make([]*string, len(idx))
	for n, i := range idx {
		keys[n], props[n] = *res[i].Event.IdempotencyKey, jsonText(res[i].Event.Properties)
	}
	originals, err := byKeys(ctx, q, s, keys, props)
	if err != nil {
		return err
	}
	for n, i := range idx {
		o, ok := originals[n]
		if !ok {
			res[i].Err = apperr.New(apperr.Internal, "idempotency_key %q: the original event is no longer stored", keys[n])
			continue
		}
		if diff := differences(res[i].Event, o, stamped[i]); diff != "" {
			res[i].Err = apperr.Field("idempotency_key", "was already used for an event with a different %s; "+
				"reuse a key only to retry the same event", diff)
			continue
		}
		o.Event.Deduplicated = true
		res[i].Event = o.Event
	}
	return nil
}

// differences names what differs between an event as sent and the stored
// event of its key ("" when nothing): the timestamp counts only when the
// request gave one.
func differences(in Event, o original, stamped bool) string {
	var d []string
	if in.MeterID != o.MeterID {
		d = append(d, "event_name")
	}
	if (in.CustomerID == nil) != (o.CustomerID == nil) || (in.CustomerID != nil && *in.CustomerID != *o.CustomerID) {
		d = append(d, "customer")
	}
	if in.Value != o.Value {
		d = append(d, "value")
	}
	if stamped && !in.Timestamp.Equal(o.Timestamp) {
		d = append(d, "timestamp")
	}
	if !o.SameProperties {
		d = append(d, "properties")
	}
	return strings.Join(d, ", ")
}

type eventRow struct {
	Mode           tenant.Mode `db:"mode"`
	ID             string      `db:"id"`
	MeterID        string      `db:"meter_id"`
	MeterKey       string      `db:"meter_key"`
	CustomerID     *string     `db:"customer_id"`
	Value          int64       `db:"value"`
	Timestamp      time.Time   `db:"event_timestamp"`
	Properties     *string     `db:"properties"`
	IdempotencyKey *string     `db:"idempotency_key"`
	CreatedAt      time.Time   `db:"created_at"`
	CancelledAt    *time.Time  `db:"cancelled_at"`
}

func (r eventRow) event() Event {
	e := Event{Mode: r.Mode, ID: r.ID, MeterID: r.MeterID, MeterKey: r.MeterKey, CustomerID: r.CustomerID, Value: r.Value,
		Timestamp: r.Timestamp, IdempotencyKey: r.IdempotencyKey, CreatedAt: r.CreatedAt, CancelledAt: r.CancelledAt}
	if r.Properties != nil {
		e.Properties = json.RawMessage(*r.Properties)
	}
	return e
}

// original is the stored event of a replayed key, and whether its
// properties equal the replay's (compared as jsonb, as stored).
type original struct {
	Event
	SameProperties bool
}

// byKeys returns the stored events of idempotency keys, by position in
// keys; props are the replays' properties to compare with theirs.
func byKeys(ctx context.Context, q store.Querier, s tenant.Scope, keys []string, props []*string) (map[int]original, error) {
	var rows []struct {
		eventRow
		N    int  `db:"n"`
		Same bool `db:"same_properties"`
	}
	err := q.SelectContext(ctx, &rows, `SELECT r.n, e.mode, e.id, e.meter_id, m.key AS meter_key, e.customer_id, e.value, e.event_timestamp,
			e.properties::text AS properties, e.idempotency_key, e.created_at, e.cancelled_at,
			e.properties IS NOT DISTINCT FROM r.props AS same_properties
		FROM unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS r(ikey, props, n)
		JOIN meter_event_keys k ON k.merchant_id = $1 AND k.mode = $2 AND k.idempotency_key = r.ikey
		JOIN meter_events e ON e.merchant_id = k.merchant_id AND e.id = k.event_id AND e.event_timestamp = k.event_timestamp
		JOIN meters m ON m.merchant_id = e.merchant_id AND m.id = e.meter_id`,
		s.MerchantID, s.Mode, pq.StringArray(keys), store.NullTexts(props))
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make(map[int]original, len(rows))
	for _, r := range rows {
		out[r.N-1] = original{Event: r.event(), SameProperties: r.Same}
	}
	return out, nil
}

package metering

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Span is one customer's usage of one meter over [From, To): what rating a
// period or pricing an upcoming charge reads.
type Span struct {
	Scope      tenant.Scope
	CustomerID string
	MeterID    string
	From, To   time.Time
}

// The select lists of aggColumns with every aggregate filled in, for spans
// of meters of different aggregations read in one statement.
const (
	allBucketColumns = `coalesce(sum(event_count), 0)::bigint AS n, sum(value_sum)::text AS s, max(value_max) AS mx,
		(array_agg(last_value ORDER BY last_at DESC, last_event_id DESC))[1] AS lv, max(last_at) AS lt,
		(array_agg(last_event_id ORDER BY last_at DESC, last_event_id DESC))[1] AS lid`
	allEventColumns = `count(*) AS n, sum(value)::text AS s, max(value) AS mx,
		(array_agg(value ORDER BY event_timestamp DESC, id DESC))[1] AS lv, max(event_timestamp) AS lt,
		(array_agg(id ORDER BY event_timestamp DESC, id DESC))[1] AS lid`
)

// manySQL reads ranges of several spans at once: each row of the arrays is
// a range of span i, read from the hour or day buckets (src hour or day;
// the days not rolled up from their hours, splitDaysSQL)
// or, with raw, from the events (src raw, the parts of an hour at a span's
// ends, all within [$9, $10)). As in spansSQL, the events (partitioned by
// week) are named only when some range needs them, then with constant
// bounds and a plan made for them, so only the weeks holding the ends are
// read.
func manySQL(raw bool) string {
	q := `WITH r AS (
	SELECT r.i, x.src, r.merchant_id, r.mode, r.customer_id, r.meter_id, x.f, x.t
	FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])
		AS r (i, src, merchant_id, mode, customer_id, meter_id, f, t)
	` + splitDaysSQL + `
)
SELECT r.i, a.* FROM r CROSS JOIN LATERAL (SELECT ` + allBucketColumns + ` FROM usage_buckets b
		WHERE b.merchant_id = r.merchant_id AND b.mode = r.mode AND b.customer_id = r.customer_id AND b.meter_id = r.meter_id
			AND b.grain = r.src AND b.start_at >= r.f AND b.start_at < r.t) a
	WHERE r.src <> 'raw'`
	if !raw {
		return q
	}
	return store.CustomPlan + q + `
UNION ALL
SELECT r.i, a.* FROM r CROSS JOIN LATERAL (SELECT ` + allEventColumns + ` FROM meter_events e
		WHERE e.merchant_id = r.merchant_id AND e.mode = r.mode AND e.customer_id = r.customer_id AND e.meter_id = r.meter_id
			AND e.event_timestamp >= $9 AND e.event_timestamp < $10
			AND e.event_timestamp >= r.f AND e.event_timestamp < r.t AND e.cancelled_at IS NULL) a
	WHERE r.src = 'raw'`
}

// AggregateMany returns the aggregates (all of them: Count, Sum, Max and
// Last) of each span's uncancelled events, in one statement, from the
// buckets as Aggregate reads them: whole days and hours from the day and
// hour buckets, only the parts of an hour at a span's ends from the events.
// So its cost does not grow with the events stored, and a period whose
// events were archived and dropped still answers, to the hour.
func AggregateMany(ctx context.Context, q store.Querier, spans []Span) ([]Agg, error) {
	out := make([]Agg, len(spans))
	var is []int64
	var src, merchants, modes, custs, meters, froms, tos []string
	var lo, hi time.Time // the bounds of the raw ranges
	add := func(i int, sp Span, kind string, r [2]time.Time) {
		is, src = append(is, int64(i)), append(src, kind)
		merchants, modes = append(merchants, sp.Scope.MerchantID), append(modes, string(sp.Scope.Mode))
		custs, meters = append(custs, sp.CustomerID), append(meters, sp.MeterID)
		froms, tos = append(froms, ts(r[0])), append(tos, ts(r[1]))
	}
	for i, sp := range spans {
		if !sp.From.Before(sp.To) {
			continue
		}
		raw, hours, days := plan(sp.From.UTC(), sp.To.UTC())
		for _, r := range raw {
			add(i, sp, "raw", r)
			if lo.IsZero() || r[0].Before(lo) {
				lo = r[0]
			}
			if r[1].After(hi) {
				hi = r[1]
			}
		}
		for _, r := range hours {
			add(i, sp, Hour, r)
		}
		if days[0].Before(days[1]) {
			add(i, sp, Day, days)
		}
	}
	if len(is) == 0 {
		return out, nil
	}
	var rows []struct {
		I int64 `db:"i"`
		aggRow
	}
	args := []any{pq.Int64Array(is), pq.StringArray(src), pq.StringArray(merchants), pq.StringArray(modes),
		pq.StringArray(custs), pq.StringArray(meters), pq.StringArray(froms), pq.StringArray(tos)}
	if !lo.IsZero() {
		args = append(args, lo, hi)
	}
	err := q.SelectContext(ctx, &rows, manySQL(!lo.IsZero()), args...)
	if err != nil {
		return nil, store.Translate(err)
	}
	for _, r := range rows {
		out[r.I].add(r.agg())
	}
	return out, nil
}

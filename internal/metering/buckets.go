package metering

import (
	"context"
	"math/big"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// BucketShards is how many rows may share one usage bucket (see the
// migration that creates usage_buckets). A batch adds to the first shard no
// other batch of its merchant and mode holds (a try-lock per shard, held to
// commit), so concurrent batches never wait on each other's bucket rows,
// and a quiet scope keeps one row per bucket; with more concurrent batches
// than shards, a batch takes one at random and may wait.
const BucketShards = 8

// bucketShardSpace is the first key of the shards' advisory locks ("th").
const bucketShardSpace = 0x7468

// Usage buckets come in two grains: hour and day. A summary reads a whole
// day as one day row per shard rather than 24 hour rows, so a 30-day
// summary reads about 30 rows per shard instead of 720; hour rows serve
// hourly windows, the partial days at a span's ends and the days not yet
// rolled up (today's). Ingestion upserts hour rows; day rows are rolled up
// once a day is over (rollup.go), which spares ingestion a second upsert
// per customer and batch; summaries were twice as slow without day rows.

// aggExprs are the expressions aggColumns and anyAggColumns aggregate:
// from usage_buckets when buckets, else from meter_events.
func aggExprs(buckets bool) (n, sum, mx, v, at, id string) {
	if buckets {
		return "coalesce(sum(event_count), 0)::bigint", "sum(value_sum)", "max(value_max)", "last_value", "last_at", "last_event_id"
	}
	return "count(*)", "sum(value)", "max(value)", "value", "event_timestamp", "id"
}

// aggColumns is the select list that aggregates rows for a meter of the
// given aggregation: n, the number of events (0 when there are none), and
// only the aggregate the meter reads (the others NULL), so a summary of a
// sum meter sorts nothing.
func aggColumns(aggregation string, buckets bool) string {
	n, sum, mx, v, at, id := aggExprs(buckets)
	cols := n + ` AS n, ` + sum + `::text AS s, NULL::bigint AS mx, NULL::bigint AS lv, NULL::timestamptz AS lt, NULL::text AS lid`
	switch aggregation {
	case Count:
		cols = n + ` AS n, NULL::text AS s, NULL::bigint AS mx, NULL::bigint AS lv, NULL::timestamptz AS lt, NULL::text AS lid`
	case Max:
		cols = n + ` AS n, NULL::text AS s, ` + mx + ` AS mx, NULL::bigint AS lv, NULL::timestamptz AS lt, NULL::text AS lid`
	case Last:
		order := ` ORDER BY ` + at + ` DESC, ` + id + ` DESC))[1]`
		cols = n + ` AS n, NULL::text AS s, NULL::bigint AS mx, (array_agg(` + v + order + ` AS lv, max(` + at + `) AS lt, (array_agg(` + id + order + ` AS lid`
	}
	return cols
}

type aggRow struct {
	N   int64      `db:"n"`
	S   *string    `db:"s"`
	Mx  *int64     `db:"mx"`
	Lv  *int64     `db:"lv"`
	Lt  *time.Time `db:"lt"`
	Lid *string    `db:"lid"`
}

func (r aggRow) agg() Agg {
	a := Agg{Count: r.N, Max: r.Mx, Last: r.Lv}
	if r.S != nil {
		a.Sum, _ = new(big.Int).SetString(*r.S, 10)
	}
	if r.Lt != nil {
		a.LastAt = *r.Lt
	}
	if r.Lid != nil {
		a.LastID = *r.Lid
	}
	return a
}

// spansSQL aggregates, in one round trip, the whole hours [f, t) of each
// span numbered i from the hour buckets ($5-$7), its whole days ($8-$10)
// from the day buckets where rolled up and from the hour buckets after
// (see rollup.go) and, with raw, the parts of an hour at a span's ends
// from the events themselves ($11-$13, all within [$14, $15)): the
// customer $3 of scope ($1, $2) on the meter $4, with the meter's
// aggregation.
//
// The events are partitioned by week, and a statement that names them
// locks and opens every partition when it runs, even for no rows: so the
// events are named only when some span has a raw end, and then with
// constant bounds and a plan made for them (store.CustomPlan), which reads
// only the weeks holding those ends.
func spansSQL(aggregation string, raw bool) string {
	// lo and hi bound start_at, in terms of the range [r.f, r.t).
	buckets := func(grain, i, f, t, lo, hi string) string {
		return `SELECT r.i, a.* FROM unnest(` + i + `::bigint[], ` + f + `::timestamptz[], ` + t + `::timestamptz[]) AS r(i, f, t)
	CROSS JOIN LATERAL (SELECT ` + aggColumns(aggregation, true) + ` FROM usage_buckets
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
			AND grain = '` + grain + `' AND start_at >= ` + lo + ` AND start_at < ` + hi + `) a`
	}
	// The days rolled up come from the day rows, the others from their hours.
	q := buckets(Hour, "$5", "$6", "$7", "r.f", "r.t") + `
UNION ALL
` + buckets(Day, "$8", "$9", "$10", "r.f", "least(r.t, "+scopeThroughSQL+")") + `
UNION ALL
` + buckets(Hour, "$8", "$9", "$10", "greatest(r.f, "+scopeThroughSQL+")", "r.t")
	if !raw {
		return q
	}
	return store.CustomPlan + q + `
UNION ALL
SELECT r.i, a.* FROM unnest($11::bigint[], $12::timestamptz[], $13::timestamptz[]) AS r(i, f, t)
	CROSS JOIN LATERAL (SELECT ` + aggColumns(aggregation, false) + ` FROM meter_events
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
			AND event_timestamp >= $14 AND event_timestamp < $15
			AND event_timestamp >= r.f AND event_timestamp < r.t AND cancelled_at IS NULL) a`
}

// spanList is one column set of spansSQL: span numbers and ranges.
type spanList struct {
	i        []int64
	from, to []string
}

func (l *spanList) add(i int, r [2]time.Time) {
	l.i, l.from, l.to = append(l.i, int64(i)), append(l.from, ts(r[0])), append(l.to, ts(r[1]))
}

// aggregateSpans returns the aggregates of the customer's uncancelled
// events on the meter in each span [from, to), in one query: whole days
// from the day buckets, the other whole hours from the hour buckets, the
// parts of an hour at the ends from the events. Only the meter's
// aggregation is filled in (and Count).
func aggregateSpans(ctx context.Context, q store.Querier, s tenant.Scope, m Meter, customerID string, spans [][2]time.Time) ([]Agg, error) {
	var hours, days, raw spanList
	var lo, hi time.Time
	for i, sp := range spans {
		rs, hs, ds := plan(sp[0], sp[1])
		for _, r := range rs {
			raw.add(i, r)
			if lo.IsZero() || r[0].Before(lo) {
				lo = r[0]
			}
			if r[1].After(hi) {
				hi = r[1]
			}
		}
		for _, h := range hs {
			hours.add(i, h)
		}
		if ds[0].Before(ds[1]) {
			days.add(i, ds)
		}
	}
	args := []any{s.MerchantID, s.Mode, customerID, m.ID}
	for _, l := range []spanList{hours, days} {
		args = append(args, pq.Int64Array(l.i), pq.StringArray(l.from), pq.StringArray(l.to))
	}
	if len(raw.i) > 0 {
		args = append(args, pq.Int64Array(raw.i), pq.StringArray(raw.from), pq.StringArray(raw.to), lo, hi)
	}
	var rows []spanRow
	if err := q.SelectContext(ctx, &rows, spansSQL(m.Aggregation, len(raw.i) > 0), args...); err != nil {
		return nil, store.Translate(err)
	}
	return sumSpans(rows, len(spans)), nil
}

// spanRow is a row of spansSQL: a part of span I.
type spanRow struct {
	I int64 `db:"i"`
	aggRow
}

// sumSpans adds up the parts of each of n spans.
func sumSpans(rows []spanRow, n int) []Agg {
	out := make([]Agg, n)
	for _, r := range rows {
		out[r.I].add(r.agg())
	}
	return out
}

// Aggregate returns the aggregate of the customer's uncancelled events on
// the meter with event_timestamp in [from, to), from the buckets: Count and
// the meter's aggregation (read it with Value or Big).
func Aggregate(ctx context.Context, q store.Querier, s tenant.Scope, m Meter, customerID string, from, to time.Time) (Agg, error) {
	if !from.Before(to) {
		return Agg{}, nil
	}
	aggs, err := aggregateSpans(ctx, q, s, m, customerID, [][2]time.Time{{from.UTC(), to.UTC()}})
	if err != nil {
		return Agg{}, err
	}
	return aggs[0], nil
}

// bucketsCTE adds the events of the WITH item fresh to the hour buckets
// and, for an event of a day already rolled up (see rollup.go), its day
// bucket, of one shard, in key order so concurrent batches cannot deadlock:
// the first of the $11 shards whose lock (space $12, key $13 and the shard)
// is free, else one at random. The batch holds the scope's usage lock
// (shared) since it resolved its customers, so the roll-up boundary it
// reads cannot move before it commits.
const bucketsCTE = `shard AS MATERIALIZED (
	SELECT coalesce((SELECT n FROM generate_series(0, $11::int - 1) AS n
		WHERE pg_try_advisory_xact_lock($12::int, hashtext($13::text || '/' || n)) LIMIT 1), floor(random() * $11::int)::int)::smallint AS n
), buckets AS (
	INSERT INTO usage_buckets AS b (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, f.customer_id, f.meter_id, g.grain, date_trunc(g.grain, f.ts, 'UTC') AS start_at, (SELECT n FROM shard),
		count(*), sum(f.value), max(f.value),
		(array_agg(f.value ORDER BY f.ts DESC, f.id DESC))[1], max(f.ts), (array_agg(f.id ORDER BY f.ts DESC, f.id DESC))[1]
	FROM fresh f CROSS JOIN (VALUES ('day'), ('hour')) AS g (grain)
	WHERE f.customer_id IS NOT NULL
		AND (g.grain = 'hour' OR f.ts < (SELECT through FROM usage_rollups WHERE merchant_id = $1 AND mode = $2))
	GROUP BY f.customer_id, f.meter_id, g.grain, date_trunc(g.grain, f.ts, 'UTC')
	ORDER BY f.customer_id, f.meter_id, g.grain, start_at
	ON CONFLICT (merchant_id, mode, customer_id, meter_id, grain, start_at, shard) DO UPDATE SET
		event_count = b.event_count + EXCLUDED.event_count,
		value_sum = b.value_sum + EXCLUDED.value_sum,
		value_max = GREATEST(b.value_max, EXCLUDED.value_max),
		last_value = CASE WHEN (EXCLUDED.last_at, EXCLUDED.last_event_id) > (b.last_at, b.last_event_id) THEN EXCLUDED.last_value ELSE b.last_value END,
		last_event_id = CASE WHEN (EXCLUDED.last_at, EXCLUDED.last_event_id) > (b.last_at, b.last_event_id) THEN EXCLUDED.last_event_id ELSE b.last_event_id END,
		last_at = GREATEST(b.last_at, EXCLUDED.last_at)
	RETURNING 1
)`

// The hour and day buckets holding $5 (a cancelled event's timestamp) are
// recomputed: the hour from its uncancelled events, the day from its hours
// when the day is rolled up (readers take a later day from its hours).
// The day is never read back from the events: retention may have dropped
// some of its hours' rows (a week's partition at a time), and the hours
// keep what they held. Every shard goes, then one row per bucket with
// events comes back.
const (
	dropHourSQL = `DELETE FROM usage_buckets WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
		AND grain = 'hour' AND start_at = date_trunc('hour', $5::timestamptz, 'UTC')`
	rebuildHourSQL = `INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, $3, $4, 'hour', date_trunc('hour', $5::timestamptz, 'UTC'), 0, count(*), sum(e.value), max(e.value),
		(array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
		(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
	FROM meter_events e
	WHERE e.merchant_id = $1 AND e.mode = $2 AND e.customer_id = $3 AND e.meter_id = $4 AND e.cancelled_at IS NULL
		AND e.event_timestamp >= date_trunc('hour', $5::timestamptz, 'UTC')
		AND e.event_timestamp < date_trunc('hour', $5::timestamptz, 'UTC') + interval '1 hour'
	HAVING count(*) > 0`
	dropDaySQL = `DELETE FROM usage_buckets WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
		AND grain = 'day' AND start_at = date_trunc('day', $5::timestamptz, 'UTC')`
	rebuildDaySQL = `INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, $3, $4, 'day', date_trunc('day', $5::timestamptz, 'UTC'), 0, sum(h.event_count), sum(h.value_sum), max(h.value_max),
		(array_agg(h.last_value ORDER BY h.last_at DESC, h.last_event_id DESC))[1], max(h.last_at),
		(array_agg(h.last_event_id ORDER BY h.last_at DESC, h.last_event_id DESC))[1]
	FROM usage_buckets h
	WHERE h.merchant_id = $1 AND h.mode = $2 AND h.customer_id = $3 AND h.meter_id = $4 AND h.grain = 'hour'
		AND h.start_at >= date_trunc('day', $5::timestamptz, 'UTC')
		AND h.start_at < date_trunc('day', $5::timestamptz, 'UTC') + interval '24 hours'
		AND $5::timestamptz < (SELECT through FROM usage_rollups WHERE merchant_id = $1 AND mode = $2)
	HAVING count(*) > 0`
)

// rebuildBuckets recomputes the hour and day buckets holding at; the caller holds the
// scope's usage lock exclusively, so no batch adds to them meanwhile.
func rebuildBuckets(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string, at time.Time) error {
	for _, stmt := range []string{dropHourSQL, rebuildHourSQL, dropDaySQL, rebuildDaySQL} {
		if _, err := q.ExecContext(ctx, stmt, s.MerchantID, s.Mode, customerID, meterID, ts(at)); err != nil {
			return store.Translate(err)
		}
	}
	return nil
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// checksCTE leaves the alert job one check per customer and meter of the
// batch that an active alert may watch: a usage alert on the meter, or a
// spend alert. The rows are the batch's own, so no batch waits on another's
// and none is missed by a job evaluating while it commits. A scope without
// an active alert pays one probe per batch (a one-time filter), not two per
// customer.
const checksCTE = `checks AS (
	INSERT INTO alert_checks (id, merchant_id, mode, customer_id, subject)
	SELECT 'chk_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, p.customer_id, p.meter_id
	FROM (SELECT DISTINCT customer_id, meter_id FROM fresh WHERE customer_id IS NOT NULL) p
	WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = $1 AND a.mode = $2 AND a.status = 'active')
		AND (EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = $1 AND a.mode = $2 AND a.status = 'active'
				AND a.meter_id = p.meter_id AND (a.customer_id IS NULL OR a.customer_id = p.customer_id))
			OR EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = $1 AND a.mode = $2 AND a.status = 'active'
				AND a.meter_id IS NULL AND a.type = 'spend_threshold' AND (a.customer_id IS NULL OR a.customer_id = p.customer_id)))
	RETURNING 1
)`

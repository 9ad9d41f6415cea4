package metering

import (
	"context"
	"math/big"
	"strconv"
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

// Ingestion keeps two grains of buckets: hour and day. A summary reads a
// whole day as one day row per shard rather than 24 hour rows, so a
// 30-day summary reads about 30 rows per shard instead of 720; hour rows
// serve hourly windows and the partial days at a span's ends. The second
// upsert costs ingestion some of its rate; summaries were twice as slow
// without it.

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

// anyAggColumns is aggColumns for the meter m of the query, whose
// aggregation is known only when it runs: each aggregate is filtered on it,
// so the others still aggregate nothing and a sum meter sorts nothing.
func anyAggColumns(buckets bool) string {
	n, sum, mx, v, at, id := aggExprs(buckets)
	when := func(a string) string { return ` FILTER (WHERE m.aggregation = '` + a + `')` }
	order := ` ORDER BY ` + at + ` DESC, ` + id + ` DESC)` + when(Last) + `)[1]`
	return n + ` AS n, (` + sum + when(Sum) + `)::text AS s, ` + mx + when(Max) + ` AS mx, (array_agg(` + v + order + ` AS lv, max(` + at + `)` + when(Last) +
		` AS lt, (array_agg(` + id + order + ` AS lid`
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
// span numbered i from the hour buckets, its whole days from the day
// buckets, and the parts of an hour at a span's ends from the events
// themselves: the customer $3 of scope ($1, $2) on the meter whose id is
// meter, with the select list cols. Each of the three parts takes three
// arrays (span numbers, froms, tos), from parameter $first on.
func spansSQL(cols func(buckets bool) string, meter string, first int) string {
	arrays := func(k int) string {
		p := func(j int) string { return "$" + strconv.Itoa(first+k+j) }
		return `unnest(` + p(0) + `::bigint[], ` + p(1) + `::timestamptz[], ` + p(2) + `::timestamptz[]) AS r(i, f, t)`
	}
	buckets := func(grain string, k int) string {
		return `SELECT r.i, a.* FROM ` + arrays(k) + `
	CROSS JOIN LATERAL (SELECT ` + cols(true) + ` FROM usage_buckets
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = ` + meter + `
			AND grain = '` + grain + `' AND start_at >= r.f AND start_at < r.t) a`
	}
	return buckets(Hour, 0) + `
UNION ALL
` + buckets(Day, 3) + `
UNION ALL
SELECT r.i, a.* FROM ` + arrays(6) + `
	CROSS JOIN LATERAL (SELECT ` + cols(false) + ` FROM meter_events
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = ` + meter + `
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
	var rows []spanRow
	cols := func(buckets bool) string { return aggColumns(m.Aggregation, buckets) }
	args := append([]any{s.MerchantID, s.Mode, customerID, m.ID}, spanArgs(spans)...)
	if err := q.SelectContext(ctx, &rows, spansSQL(cols, "$4", 5), args...); err != nil {
		return nil, store.Translate(err)
	}
	return sumSpans(rows, len(spans)), nil
}

// spanRow is a row of spansSQL: a part of span I.
type spanRow struct {
	I int64 `db:"i"`
	aggRow
}

// spanArgs are spansSQL's nine arrays for spans: the whole days, the other
// whole hours and the raw ends of each.
func spanArgs(spans [][2]time.Time) []any {
	var hours, days, raw spanList
	for i, sp := range spans {
		rs, hs, ds := plan(sp[0], sp[1])
		for _, r := range rs {
			raw.add(i, r)
		}
		for _, h := range hs {
			hours.add(i, h)
		}
		if ds[0].Before(ds[1]) {
			days.add(i, ds)
		}
	}
	var args []any
	for _, l := range []spanList{hours, days, raw} {
		args = append(args, pq.Int64Array(l.i), pq.StringArray(l.from), pq.StringArray(l.to))
	}
	return args
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

// bucketsCTE adds the events of the WITH item fresh to the hour and day
// buckets of one shard, in key order so concurrent batches cannot deadlock: the
// first of the $11 shards whose lock (space $12, key $13 and the shard) is
// free, else one at random.
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
// recomputed from the uncancelled events: every shard goes, then one row
// per bucket with events comes back.
const (
	dropBucketsSQL = `DELETE FROM usage_buckets WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
		AND ((grain = 'hour' AND start_at = date_trunc('hour', $5::timestamptz, 'UTC'))
			OR (grain = 'day' AND start_at = date_trunc('day', $5::timestamptz, 'UTC')))`
	rebuildBucketsSQL = `INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, $3, $4, g.grain, g.start_at, 0, count(*), sum(e.value), max(e.value),
		(array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
		(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
	FROM (VALUES ('hour', date_trunc('hour', $5::timestamptz, 'UTC'), interval '1 hour'),
			('day', date_trunc('day', $5::timestamptz, 'UTC'), interval '24 hours')) AS g (grain, start_at, span)
		JOIN meter_events e ON e.merchant_id = $1 AND e.mode = $2 AND e.customer_id = $3 AND e.meter_id = $4
			AND e.event_timestamp >= g.start_at AND e.event_timestamp < g.start_at + g.span AND e.cancelled_at IS NULL
	GROUP BY g.grain, g.start_at`
)

// rebuildBuckets recomputes the hour and day buckets holding at; the caller holds the
// scope's usage lock exclusively, so no batch adds to them meanwhile.
func rebuildBuckets(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string, at time.Time) error {
	if _, err := q.ExecContext(ctx, dropBucketsSQL, s.MerchantID, s.Mode, customerID, meterID, ts(at)); err != nil {
		return store.Translate(err)
	}
	_, err := q.ExecContext(ctx, rebuildBucketsSQL, s.MerchantID, s.Mode, customerID, meterID, ts(at))
	return store.Translate(err)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// checksCTE leaves the alert job one check per customer and meter of the
// batch that an active alert may watch: a usage alert on the meter, or a
// spend alert. The rows are the batch's own, so no batch waits on another's
// and none is missed by a job evaluating while it commits.
const checksCTE = `checks AS (
	INSERT INTO alert_checks (id, merchant_id, mode, customer_id, subject)
	SELECT 'chk_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, p.customer_id, p.meter_id
	FROM (SELECT DISTINCT customer_id, meter_id FROM fresh WHERE customer_id IS NOT NULL) p
	WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = $1 AND a.mode = $2 AND a.status = 'active'
			AND a.meter_id = p.meter_id AND (a.customer_id IS NULL OR a.customer_id = p.customer_id))
		OR EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = $1 AND a.mode = $2 AND a.status = 'active'
			AND a.meter_id IS NULL AND a.type = 'spend_threshold' AND (a.customer_id IS NULL OR a.customer_id = p.customer_id))
	RETURNING 1
)`

package metering

import (
	"context"
	"math/big"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// BucketShards is how many rows share one usage bucket (see the migration
// that creates usage_buckets): a batch adds to one of them, picked at
// random, so concurrent batches for one customer seldom wait on a row lock.
const BucketShards = 4

// aggColumns reads the aggregates of the rows grouped, summing shards.
const bucketAggColumns = `sum(event_count)::bigint AS n, sum(value_sum)::text AS s, max(value_max) AS mx,
	(array_agg(last_value ORDER BY last_at DESC, last_event_id DESC))[1] AS lv, max(last_at) AS lt,
	(array_agg(last_event_id ORDER BY last_at DESC, last_event_id DESC))[1] AS lid`

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

// aggregateSpans returns the aggregates of the customer's uncancelled
// events on the meter in each span [from, to): whole hours and days come
// from the buckets (one query for all spans), the parts of an hour at the
// ends from the events themselves (one query).
func aggregateSpans(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string, spans [][2]time.Time) ([]Agg, error) {
	out := make([]Agg, len(spans))
	type key struct {
		grain string
		at    int64
	}
	owners := map[key][]int{}
	var hours, days []string
	var rawN []int64
	var rawFrom, rawTo []string
	for i, sp := range spans {
		raw, hs, ds := plan(sp[0], sp[1])
		for _, r := range raw {
			rawN = append(rawN, int64(i))
			rawFrom, rawTo = append(rawFrom, ts(r[0])), append(rawTo, ts(r[1]))
		}
		for _, h := range hs {
			k := key{Hour, h.UnixMicro()}
			if owners[k] == nil {
				hours = append(hours, ts(h))
			}
			owners[k] = append(owners[k], i)
		}
		for _, d := range ds {
			k := key{Day, d.UnixMicro()}
			if owners[k] == nil {
				days = append(days, ts(d))
			}
			owners[k] = append(owners[k], i)
		}
	}
	if len(hours)+len(days) > 0 {
		var rows []struct {
			Grain string    `db:"grain"`
			Start time.Time `db:"start_at"`
			aggRow
		}
		err := q.SelectContext(ctx, &rows, `SELECT grain, start_at, `+bucketAggColumns+` FROM usage_buckets
			WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
				AND ((grain = 'hour' AND start_at = ANY($5::timestamptz[])) OR (grain = 'day' AND start_at = ANY($6::timestamptz[])))
			GROUP BY grain, start_at`,
			s.MerchantID, s.Mode, customerID, meterID, pq.StringArray(hours), pq.StringArray(days))
		if err != nil {
			return nil, store.Translate(err)
		}
		for _, r := range rows {
			for _, i := range owners[key{r.Grain, r.Start.UnixMicro()}] {
				out[i].add(r.agg())
			}
		}
	}
	if len(rawN) > 0 {
		var rows []struct {
			I int64 `db:"i"`
			aggRow
		}
		err := q.SelectContext(ctx, &rows, `SELECT r.i, a.* FROM unnest($5::bigint[], $6::timestamptz[], $7::timestamptz[]) AS r(i, f, t)
			CROSS JOIN LATERAL (SELECT count(*) AS n, sum(value)::text AS s, max(value) AS mx,
				(array_agg(value ORDER BY event_timestamp DESC, id DESC))[1] AS lv, max(event_timestamp) AS lt,
				(array_agg(id ORDER BY event_timestamp DESC, id DESC))[1] AS lid
				FROM meter_events WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4
					AND event_timestamp >= r.f AND event_timestamp < r.t AND cancelled_at IS NULL) a`,
			s.MerchantID, s.Mode, customerID, meterID, pq.Int64Array(rawN), pq.StringArray(rawFrom), pq.StringArray(rawTo))
		if err != nil {
			return nil, store.Translate(err)
		}
		for _, r := range rows {
			out[r.I].add(r.agg())
		}
	}
	return out, nil
}

// Aggregate returns the aggregates of the customer's uncancelled events on
// the meter with event_timestamp in [from, to), from the buckets.
func Aggregate(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string, from, to time.Time) (Agg, error) {
	if !from.Before(to) {
		return Agg{}, nil
	}
	aggs, err := aggregateSpans(ctx, q, s, customerID, meterID, [][2]time.Time{{from.UTC(), to.UTC()}})
	if err != nil {
		return Agg{}, err
	}
	return aggs[0], nil
}

// bucketsCTE adds the events of the WITH item fresh to the hour and day
// buckets of shard $11, in key order so concurrent batches cannot deadlock.
const bucketsCTE = `buckets AS (
	INSERT INTO usage_buckets AS b (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, f.customer_id, f.meter_id, g.grain, date_trunc(g.grain, f.ts, 'UTC') AS start_at, $11::smallint,
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

// rebuildBuckets recomputes the buckets holding at; the caller holds the
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

package metering

import (
	"context"
	"math/big"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A usage summary is a hot read: a customer's page or an agent may ask for
// it on every view, a thousand times a second. Its cost is mostly round
// trips: each one wakes a PostgreSQL backend and the daemon again, and on a
// busy machine each wake-up may wait for a core, which is where its slow
// requests came from. So a summary whose from is given is one statement
// (usageOnceSQL): the meter, the customer's existence and every range's
// aggregate. Only a refusal pays more, to say what is missing.

// meterRefs splits a meter reference into the id and the key it may be
// ("" for neither), as ResolveMeter reads it: an id first.
func meterRefs(ref string) (id, key string) {
	if strings.HasPrefix(ref, "meter_") {
		id = ref
	}
	if len(ref) <= MaxKeyLen && KeyPattern.MatchString(ref) {
		key = ref
	}
	return id, key
}

// targetSQL is the meter $4 (an id) or $5 (a key) of scope ($1, $2), when
// the scope's customer $3 exists.
const targetSQL = `SELECT ` + columns + ` FROM meters
	WHERE merchant_id = $1 AND mode = $2 AND (id = $4 OR key = $5)
		AND EXISTS (SELECT 1 FROM customers WHERE merchant_id = $1 AND mode = $2 AND id = $3)
	ORDER BY id = $4 DESC LIMIT 1`

// usageTarget is ResolveMeter for a summary of customerID, which must be
// the scope's, in one statement; only a refusal pays more, to say which of
// the two is missing (the customer first, as the path names it).
func usageTarget(ctx context.Context, q store.Querier, s tenant.Scope, customerID, ref string) (Meter, error) {
	if ref != "" {
		id, key := meterRefs(ref)
		var ms []Meter
		if err := q.SelectContext(ctx, &ms, targetSQL, s.MerchantID, s.Mode, customerID, id, key); err != nil {
			return Meter{}, store.Translate(err)
		}
		if len(ms) == 1 {
			return ms[0], nil
		}
	}
	return Meter{}, usageRefusal(ctx, q, s, customerID, ref)
}

// usageRefusal says why a summary found no meter: the customer is missing
// (first, as the path names it), or the meter is.
func usageRefusal(ctx context.Context, q store.Querier, s tenant.Scope, customerID, ref string) error {
	if _, err := customers.GetForPath(ctx, q, s, customerID); err != nil {
		return err
	}
	_, err := ResolveMeter(ctx, q, s, ref)
	return err
}

// The aggregates of usageOnceSQL, all of them since the meter is read in
// the same statement; FILTER keeps the last value's sort to last meters,
// so a sum meter's summary still sorts nothing.
const (
	onceBucketColumns = `coalesce(sum(b.event_count), 0)::bigint, sum(b.value_sum)::text, max(b.value_max),
		(array_agg(b.last_value ORDER BY b.last_at DESC, b.last_event_id DESC) FILTER (WHERE m.aggregation = 'last'))[1], max(b.last_at),
		(array_agg(b.last_event_id ORDER BY b.last_at DESC, b.last_event_id DESC) FILTER (WHERE m.aggregation = 'last'))[1]`
	onceEventColumns = `count(*), sum(e.value)::text, max(e.value),
		(array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC) FILTER (WHERE m.aggregation = 'last'))[1], max(e.event_timestamp),
		(array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC) FILTER (WHERE m.aggregation = 'last'))[1]`
)

// The meter's columns of usageOnceSQL: on its first row only (i = -1),
// NULL on the ranges' rows, so the meter is sent and decoded once.
const (
	onceMeterColumns = `m.aggregation, m.id, m.key, m.display_name, m.seq, m.event_value_key, m.unit_label, m.description, m.created_at`
	onceNoMeter      = `NULL::text, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::timestamptz`
)

// usageOnceSQL is targetSQL's meter (the row i = -1) and, for each range
// of the arrays $6-$9 (span i, read from the hour or day buckets, the
// days not rolled up from their hours: splitScopeDaysSQL), that
// range's aggregates: no row at all when the meter or the customer is
// missing.
const usageOnceSQL = `WITH m AS MATERIALIZED (` + targetSQL + `),
r AS (SELECT r.i, x.src, x.f, x.t FROM unnest($6::bigint[], $7::text[], $8::timestamptz[], $9::timestamptz[]) AS r (i, src, f, t)
	` + splitScopeDaysSQL + `)
SELECT -1::bigint AS i, ` + onceMeterColumns + `, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::text FROM m
UNION ALL
SELECT r.i, ` + onceNoMeter + `, a.* FROM m CROSS JOIN r CROSS JOIN LATERAL (SELECT ` + onceBucketColumns + ` FROM usage_buckets b
		WHERE b.merchant_id = $1 AND b.mode = $2 AND b.customer_id = $3 AND b.meter_id = m.id
			AND b.grain = r.src AND b.start_at >= r.f AND b.start_at < r.t) a
	WHERE r.src <> 'raw'`

// usageOnceRawSQL is usageOnceSQL with the raw ranges too, the parts of an
// hour at a span's ends, read from the events (all within [$10, $11)). As
// in spansSQL, the events are named only when some range needs them, then
// with constant bounds and a plan made for them.
const usageOnceRawSQL = store.CustomPlan + usageOnceSQL + `
UNION ALL
SELECT r.i, ` + onceNoMeter + `, a.* FROM m CROSS JOIN r CROSS JOIN LATERAL (SELECT ` + onceEventColumns + ` FROM meter_events e
		WHERE e.merchant_id = $1 AND e.mode = $2 AND e.customer_id = $3 AND e.meter_id = m.id
			AND e.event_timestamp >= $10 AND e.event_timestamp < $11
			AND e.event_timestamp >= r.f AND e.event_timestamp < r.t AND e.cancelled_at IS NULL) a
	WHERE r.src = 'raw'`

// usageOnce is Usage of the meter ref over [from, to) in one statement:
// ok=false, with no error, when the meter or the customer is missing
// (Usage then says which). Its rows are scanned by hand: a summary's
// allocations are most of the daemon's garbage under this load.
func usageOnce(ctx context.Context, q store.Querier, s tenant.Scope, customerID, ref string, u Summary, spans [][2]time.Time) (Summary, bool, error) {
	if ref == "" {
		return u, false, nil
	}
	var ranges rangeList
	for i, sp := range spans {
		ranges.add(i, sp)
	}
	id, key := meterRefs(ref)
	query, args := usageOnceSQL, []any{s.MerchantID, s.Mode, customerID, id, key,
		pq.Int64Array(ranges.i), pq.StringArray(ranges.src), pq.StringArray(ranges.from), pq.StringArray(ranges.to)}
	if !ranges.lo.IsZero() {
		query, args = usageOnceRawSQL, append(args, ranges.lo, ranges.hi)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return u, false, store.Translate(err)
	}
	defer rows.Close()
	aggs := make([]Agg, len(spans))
	found := false
	for rows.Next() {
		var (
			i       int64
			m       meterRow
			r       aggRow
			n       *int64
			sum     *string
			created *time.Time
		)
		if err := rows.Scan(&i, &m.Aggregation, &m.ID, &m.Key, &m.DisplayName, &m.Seq, &m.EventValueKey, &m.UnitLabel, &m.Description, &created,
			&n, &sum, &r.Mx, &r.Lv, &r.Lt, &r.Lid); err != nil {
			return u, false, store.Translate(err)
		}
		if i < 0 {
			found = true
			u.Meter = Meter{MerchantID: s.MerchantID, Mode: s.Mode, ID: *m.ID, Seq: *m.Seq, Key: *m.Key, DisplayName: *m.DisplayName,
				Aggregation: *m.Aggregation, EventValueKey: m.EventValueKey, UnitLabel: m.UnitLabel, Description: m.Description, CreatedAt: *created}
			continue
		}
		a := Agg{Count: *n, Max: r.Mx, Last: r.Lv}
		if sum != nil {
			a.Sum, _ = new(big.Int).SetString(*sum, 10)
		}
		if r.Lt != nil {
			a.LastAt = *r.Lt
		}
		if r.Lid != nil {
			a.LastID = *r.Lid
		}
		aggs[i].add(a)
	}
	if err := rows.Err(); err != nil {
		return u, false, store.Translate(err)
	}
	if !found {
		return u, false, nil
	}
	return u.fill(aggs), true, nil
}

// meterRow is the meter's columns of usageOnceSQL, NULL on a range's row.
type meterRow struct {
	Aggregation, ID, Key, DisplayName     *string
	Seq                                   *int64
	EventValueKey, UnitLabel, Description *string
}

// rangeList is the arrays of usageOnceSQL: each span's ranges (see plan),
// and the bounds of the raw ones.
type rangeList struct {
	i             []int64
	src, from, to []string
	lo, hi        time.Time
}

func (l *rangeList) add(i int, sp [2]time.Time) {
	raw, hours, days := plan(sp[0], sp[1])
	push := func(src string, r [2]time.Time) {
		l.i, l.src = append(l.i, int64(i)), append(l.src, src)
		l.from, l.to = append(l.from, ts(r[0])), append(l.to, ts(r[1]))
	}
	for _, r := range raw {
		push("raw", r)
		if l.lo.IsZero() || r[0].Before(l.lo) {
			l.lo = r[0]
		}
		if r[1].After(l.hi) {
			l.hi = r[1]
		}
	}
	for _, r := range hours {
		push(Hour, r)
	}
	if days[0].Before(days[1]) {
		push(Day, days)
	}
}

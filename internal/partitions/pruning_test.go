package partitions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// The hot statements on recent data read recent partitions only, planned
// for their values (custom plan) or once for all values (generic plan,
// pruned when it starts): no partition older than the data asked for is
// scanned. The statements are the shapes the daemon sends: a usage window
// or span, a billing period's usage, the replay lookup of an idempotency
// key, and the live feed's first page (ordered by the partition key, it
// merges the newest entry of each month, the default partition's too, and
// reads on only in the months the page holds).
func TestRecentQueriesReadRecentPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	now := time.Now().UTC()
	me, ev := partitions.MeterEvents(), partitions.Events()
	withoutLegacy(t, db, now)
	// Old weeks and months, holding rows, as a database kept a year has.
	for w := me.Start(now.AddDate(0, 0, -7*30)); w.Before(me.Start(now.AddDate(0, 0, -7*8))); w = me.Next(w) {
		if _, err := db.ExecContext(ctx, `SELECT partition_add('meter_events', 'event_timestamp', $1, $2)`, w, me.Next(w)); err != nil {
			t.Fatal(err)
		}
	}
	for m := ev.Start(now.AddDate(0, -6, 0)); m.Before(ev.Start(now)); m = ev.Next(m) {
		if _, err := db.ExecContext(ctx, `SELECT partition_add('events', 'created_at', $1, $2)`, m, ev.Next(m)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.ExecContext(ctx, `
		INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp, idempotency_key)
		SELECT 'mch_p', 'live', 'me_' || n, 'mtr_p', 'cus_p', 1, now() - n * interval '1 day', 'key' || n FROM generate_series(0, 200) n;
		INSERT INTO meter_event_keys (merchant_id, mode, idempotency_key, event_id, event_timestamp)
		SELECT merchant_id, mode, idempotency_key, id, event_timestamp FROM meter_events;
		INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
		SELECT 'mch_p', 'live', 'evt_' || n, 'invoice.created', '{}', now() - n * interval '1 day', now() - n * interval '1 day'
		FROM generate_series(0, 180) n;
		ANALYZE meter_events; ANALYZE events; ANALYZE meter_event_keys`)
	if err != nil {
		t.Fatal(err)
	}
	// As in a database of real size, where reading a partition whole
	// costs more than its index (explain sets enable_seqscan off).
	//
	// Old: every partition ending before the oldest time a query asks for
	// (a week of usage; this month's events).
	oldMeter, oldEvents := olderThan(t, db, "meter_events", now.AddDate(0, 0, -7)), olderThan(t, db, "events", ev.Start(now))
	if len(oldMeter) < 20 || len(oldEvents) < 4 {
		t.Fatalf("old partitions: %v, %v", oldMeter, oldEvents)
	}
	weekAgo, hourAgo := now.AddDate(0, 0, -7), now.Add(-time.Hour)
	for _, c := range []struct {
		name, sql string
		args      []any
		old       []string
		// head: an old partition may be read for its first row only.
		head bool
		// cond: the start of the index condition the rows are found by.
		cond string
	}{
		{"usage_window", `SELECT count(*), coalesce(sum(value), 0), max(value) FROM meter_events
			WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND event_timestamp >= $5 AND cancelled_at IS NULL`,
			[]any{"mch_p", "live", "cus_p", "mtr_p", weekAgo}, oldMeter, false, "Index Cond: ((customer_id = "},
		{"usage_span", `SELECT count(*), coalesce(sum(value), 0) FROM meter_events
			WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND event_timestamp >= $5 AND event_timestamp < $6 AND cancelled_at IS NULL`,
			[]any{"mch_p", "live", "cus_p", "mtr_p", hourAgo, now}, oldMeter, false, "Index Cond: ((customer_id = "},
		{"dedupe", `SELECT e.id, e.value FROM unnest($3::text[]) AS r(ikey)
			JOIN meter_event_keys k ON k.merchant_id = $1 AND k.mode = $2 AND k.idempotency_key = r.ikey
			JOIN meter_events e ON e.merchant_id = k.merchant_id AND e.id = k.event_id AND e.event_timestamp = k.event_timestamp`,
			[]any{"mch_p", "live", "{key1,key2}"}, oldMeter, false, ""},
		{"feed_first_page", `SELECT id, seq FROM events WHERE merchant_id = $1 AND mode = $2
			ORDER BY created_at DESC, seq DESC LIMIT 26`, []any{"mch_p", "live"}, oldEvents, true, ""},
	} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan := explain(t, db, c.name, mode, c.sql, c.args)
			// Usage is read through the index led by the customer, which
			// every reader names (see migration 079).
			if c.cond != "" && !strings.Contains(plan, c.cond) {
				t.Errorf("%s (%s) does not find its rows by %q:\n%s", c.name, mode, c.cond, plan)
			}
			for _, line := range strings.Split(plan, "\n") {
				for _, p := range c.old {
					if strings.Contains(line, p+" ") && !strings.Contains(line, "(never executed)") &&
						!(c.head && (strings.Contains(line, "(actual rows=1 loops=1)") || strings.Contains(line, "(actual rows=0 loops=1)"))) {
						t.Errorf("%s (%s) reads %s:\n%s", c.name, mode, p, plan)
					}
				}
			}
		}
	}
}

// olderThan lists table's partitions whose range ends at or before t.
func olderThan(t *testing.T, q store.Querier, table string, at time.Time) []string {
	t.Helper()
	ps, err := partitions.List(context.Background(), q, table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		if !p.End.After(at) {
			out = append(out, p.Name)
		}
	}
	return out
}

// explain runs sql, prepared, under plan_cache_mode mode and returns its
// EXPLAIN ANALYZE: pruning when the plan starts shows as partitions left
// out, and partitions an ordered scan never reached as never executed.
func explain(t *testing.T, db *store.DB, name, mode, sql string, args []any) string {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer conn.ExecContext(ctx, `DEALLOCATE `+name+`; RESET ALL`) //nolint:errcheck
	if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off; SET enable_bitmapscan = off; SET plan_cache_mode = `+mode+`; PREPARE `+name+` AS `+sql); err != nil {
		t.Fatal(err)
	}
	// Values as literals: EXPLAIN takes no bind parameters.
	params := make([]string, len(args))
	for i, a := range args {
		if at, ok := a.(time.Time); ok {
			a = at.Format(time.RFC3339Nano)
		}
		params[i] = pq.QuoteLiteral(fmt.Sprint(a))
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE `+name+`(`+strings.Join(params, ", ")+`)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// Package partitions keeps the time-partitioned tables (usage events; the
// event feed) in shape: it creates each table's partitions ahead of the
// time they are written, from the job runner and never on a request's
// path, and drops the partitions older than the retention, after checking
// that nothing still needs them. The partitioned tables and partition_add
// are made by migrations; partition names are TABLE_pYYYYMMDD, the UTC
// date their range starts.
package partitions

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Table is a time-partitioned table.
type Table struct {
	Name string
	// Column is the partition key, a timestamptz.
	Column string
	// Period is "week" (from Monday) or "month", in UTC.
	Period string
	// Behind and Ahead bound the partitions that must exist around now:
	// the oldest time a row may still be written with, and how far ahead
	// of now partitions are made, so that a job runner stopped for a
	// while leaves writes a margin.
	Behind, Ahead time.Duration
}

// MeterEvents is the usage events table: events are backdated up to
// metering.MaxAge.
func MeterEvents() Table {
	return Table{Name: "meter_events", Column: "event_timestamp", Period: "week", Behind: metering.MaxAge, Ahead: 6 * 7 * 24 * time.Hour}
}

// Events is the event feed: written at the database's now, never
// backdated.
func Events() Table {
	return Table{Name: "events", Column: "created_at", Period: "month", Ahead: 90 * 24 * time.Hour}
}

// Tables are the time-partitioned tables.
func Tables() []Table { return []Table{MeterEvents(), Events()} }

// Start returns the start of the period holding t.
func (t Table) Start(at time.Time) time.Time {
	at = at.UTC()
	y, m, d := at.Date()
	if t.Period == "month" {
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}

// Next returns the start of the period after the one starting at start.
func (t Table) Next(start time.Time) time.Time {
	if t.Period == "month" {
		return start.AddDate(0, 1, 0)
	}
	return start.AddDate(0, 0, 7)
}

// lockTimeout bounds how long partition DDL waits for a table lock: it
// queues behind running transactions and blocks new ones while it waits,
// so it gives up quickly and tries again at the job's next run.
const lockTimeout = "5s"

// Ensure makes the partitions of every table from now-Behind to now+Ahead
// that do not exist yet (moving into them any rows the default partition
// took) and returns the names it made. It is the job runner's; requests
// never create partitions.
func Ensure(ctx context.Context, db *store.DB, now time.Time) ([]string, error) {
	var made []string
	for _, t := range Tables() {
		have, err := List(ctx, db, t.Name)
		if err != nil {
			return made, err
		}
		for p := t.Start(now.Add(-t.Behind)); !p.After(now.Add(t.Ahead)); p = t.Next(p) {
			if covered(have, p, t.Next(p)) {
				continue
			}
			var ok bool
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+lockTimeout+`'`); err != nil {
					return err
				}
				return tx.GetContext(ctx, &ok, `SELECT partition_add($1, $2, $3, $4)`, t.Name, t.Column, p, t.Next(p))
			})
			if err != nil {
				return made, fmt.Errorf("partition %s at %s: %w", t.Name, p.Format(time.DateOnly), store.Translate(err))
			}
			if ok {
				made = append(made, fmt.Sprintf("%s_p%s", t.Name, p.Format("20060102")))
			}
		}
	}
	return made, nil
}

// covered reports whether a partition of ps overlaps [lo, hi): the one a
// migration made of the rows stored before it covers every period up to
// its end.
func covered(ps []Partition, lo, hi time.Time) bool {
	for _, p := range ps {
		if (p.Start == nil || p.Start.Before(hi)) && p.End.After(lo) {
			return true
		}
	}
	return false
}

// Partition is one range partition of a table; the default partition is
// not listed.
type Partition struct {
	Name string `db:"name"`
	// Start is nil for the partition that starts at MINVALUE (rows older
	// than the weekly partitions a migration made).
	Start *time.Time `db:"start_at"`
	End   time.Time  `db:"end_at"`
}

// List returns table's range partitions, oldest first.
func List(ctx context.Context, q store.Querier, table string) ([]Partition, error) {
	var out []Partition
	err := q.SelectContext(ctx, &out, `SELECT c.relname AS name,
			(regexp_match(b.bound, 'FROM \(''([^'']+)''\)'))[1]::timestamptz AS start_at,
			(regexp_match(b.bound, 'TO \(''([^'']+)''\)'))[1]::timestamptz AS end_at
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) b
		WHERE i.inhparent = $1::regclass AND b.bound <> 'DEFAULT'
		ORDER BY end_at`, table)
	return out, store.Translate(err)
}

// quote is an identifier for SQL text.
func quote(name string) string { return pq.QuoteIdentifier(name) }

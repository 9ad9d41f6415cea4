package partitions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// Kept is a partition older than the retention that was not dropped, and
// why.
type Kept struct {
	Partition
	Reason string
}

// Outcome is what a retention run did to one table.
type Outcome struct {
	Dropped []string
	Kept    []Kept
}

// holds returns, for a partition of t ending at end, why it must be kept
// ("" when nothing needs it).
func holds(ctx context.Context, q store.Querier, t Table, p Partition) (string, error) {
	switch t.Name {
	case "meter_events":
		// Metered rating reads a subscription's period from the events
		// (buckets hold hours and days, not the period's own edges), so a
		// week is kept while an open subscription's unrated period, the
		// current one or one whose charge is outstanding, starts before
		// the week ends. A global read, made once a run: retention is
		// about the whole table.
		var n int
		err := q.GetContext(ctx, &n, `SELECT count(*) FROM subscriptions
			WHERE usage_type = 'metered' AND ended_at IS NULL AND LEAST(current_period_start, outstanding_start) < $1`, p.End)
		if err != nil || n == 0 {
			return "", store.Translate(err)
		}
		return fmt.Sprintf("%d metered subscriptions have a period not yet rated that starts before %s", n, p.End.Format(time.RFC3339)), nil
	case "events":
		// Pending deliveries are the queue, read through its partial
		// index: at most the deliveries waiting, each probing the month
		// for its event.
		var n int
		err := q.GetContext(ctx, &n, `SELECT count(*) FROM webhook_deliveries d WHERE d.status = 'pending'
			AND EXISTS (SELECT 1 FROM `+quote(p.Name)+` e WHERE e.merchant_id = d.merchant_id AND e.id = d.event_id)`)
		if err != nil || n == 0 {
			return "", store.Translate(err)
		}
		return fmt.Sprintf("%d deliveries of its events are still pending", n), nil
	}
	return "", nil
}

// clear deletes what refers to the rows of partition p of t before it is
// dropped: an events month's deliveries, with their attempts (no foreign
// key cascades to them: this statement deletes them). It runs before, not
// with, the drop: the drop's lock on the table stops every write to it, and
// must be held for an instant only.
func clear(ctx context.Context, q store.Querier, t Table, p Partition) error {
	if t.Name != "events" {
		return nil
	}
	_, err := q.ExecContext(ctx, `WITH d AS (
			DELETE FROM webhook_deliveries d USING `+quote(p.Name)+` e
			WHERE d.merchant_id = e.merchant_id AND d.event_id = e.id AND d.status <> 'pending'
			RETURNING d.merchant_id, d.id
		)
		DELETE FROM webhook_attempts a USING d WHERE a.merchant_id = d.merchant_id AND a.delivery_id = d.id`)
	return store.Translate(err)
}

// errHeld rolls back a drop that found its partition needed after all.
var errHeld = errors.New("partition still needed")

// Drop detaches and drops the partitions of t whose whole range is more
// than retention before now, oldest first, except those something still
// needs (see holds); it stops at the first of those, so what remains is
// always a contiguous run of periods. The default partition is never
// dropped.
func Drop(ctx context.Context, db *store.DB, t Table, retention time.Duration, now time.Time) (Outcome, error) {
	var out Outcome
	if retention <= 0 {
		return out, fmt.Errorf("partitions: retention must be positive")
	}
	ps, err := List(ctx, db, t.Name)
	if err != nil {
		return out, err
	}
	cutoff := now.Add(-retention)
	for _, p := range ps {
		if p.End.After(cutoff) {
			break
		}
		reason, err := holds(ctx, db, t, p)
		if err != nil {
			return out, err
		}
		if reason != "" {
			out.Kept = append(out.Kept, Kept{Partition: p, Reason: reason})
			break
		}
		if err := clear(ctx, db, t, p); err != nil {
			return out, fmt.Errorf("clear %s: %w", p.Name, err)
		}
		// One transaction: a partition detached but left behind would
		// hide rows from the table without freeing their space. What
		// holds it is checked again once detached, when no write can
		// reach it any more.
		var late string
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+lockTimeout+`'`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+quote(t.Name)+` DETACH PARTITION `+quote(p.Name)); err != nil {
				return err
			}
			if late, err = holds(ctx, tx, t, p); err != nil || late != "" {
				return errors.Join(err, errHeld)
			}
			_, err := tx.ExecContext(ctx, `DROP TABLE `+quote(p.Name))
			return err
		})
		if late != "" {
			out.Kept = append(out.Kept, Kept{Partition: p, Reason: late})
			break
		}
		if err != nil {
			return out, fmt.Errorf("drop %s: %w", p.Name, store.Translate(err))
		}
		out.Dropped = append(out.Dropped, p.Name)
	}
	return out, nil
}

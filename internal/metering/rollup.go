package metering

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Day buckets are rolled up from hour buckets once a day is over, not
// upserted by every batch. usage_rollups.through is, per scope, the start
// of the first day not rolled up ('-infinity' without a row): the day rows
// of every earlier day are complete, and ingestion and cancels keep them
// exact (bucketsCTE, rebuildDaySQL); a reader takes those days from the day
// rows and the later ones from their hours, so answers never depend on when
// the job last ran, only their cost does. RollUp moves through forward
// under the scope's usage lock held exclusively: a batch holds it shared
// from before it reads through until it commits, so none adds to an hour
// the roll-up has read without adding to its day too.

// scopeThroughSQL is the roll-up boundary of the scope ($1, $2): the start
// of its first day not rolled up.
const scopeThroughSQL = `coalesce((SELECT u.through FROM usage_rollups u WHERE u.merchant_id = $1 AND u.mode = $2), '-infinity'::timestamptz)`

// splitDaysSQL follows the FROM item r of a reader's ranges (columns
// merchant_id, mode, src, f and t, see plan): a range of whole days becomes
// its days rolled up (x.src day) and the rest of it, read from the hour
// rows (x.src hour). Select x.src, x.f and x.t in place of r's.
const splitDaysSQL = `CROSS JOIN LATERAL (SELECT coalesce((SELECT u.through FROM usage_rollups u
			WHERE u.merchant_id = r.merchant_id AND u.mode = r.mode), '-infinity'::timestamptz) AS at) w
	` + splitDaysTail

// splitScopeDaysSQL is splitDaysSQL for ranges of the scope ($1, $2).
const splitScopeDaysSQL = `CROSS JOIN LATERAL (SELECT ` + scopeThroughSQL + ` AS at) w
	` + splitDaysTail

const splitDaysTail = `CROSS JOIN LATERAL (VALUES (r.src, r.f, CASE WHEN r.src = 'day' THEN least(r.t, w.at) ELSE r.t END),
		(CASE WHEN r.src = 'day' THEN 'hour' END, greatest(r.f, w.at), r.t)) AS x (src, f, t)
	WHERE x.src IS NOT NULL AND x.f < x.t`

// rollupDueSQL lists the scopes with a meter whose boundary is before $1.
const rollupDueSQL = `SELECT DISTINCT m.merchant_id, m.mode FROM meters m
	LEFT JOIN usage_rollups u ON u.merchant_id = m.merchant_id AND u.mode = m.mode
	WHERE u.through IS NULL OR u.through < $1
	ORDER BY 1, 2`

// The days [$3, $4) of scope ($1, $2) are rebuilt from their hour rows:
// any day row there (a cancel's, or an older release's) goes, then one row
// per customer, meter and day with hours comes back.
const (
	rollupDropSQL = `DELETE FROM usage_buckets b
	WHERE b.merchant_id = $1 AND b.mode = $2 AND b.grain = 'day' AND b.start_at >= $3 AND b.start_at < $4
		AND (b.customer_id, b.meter_id) IN (SELECT DISTINCT customer_id, meter_id FROM usage_buckets
			WHERE merchant_id = $1 AND mode = $2 AND grain = 'hour' AND start_at >= $3 AND start_at < $4)`
	rollupSQL = `INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
		event_count, value_sum, value_max, last_value, last_at, last_event_id)
	SELECT $1, $2, h.customer_id, h.meter_id, 'day', date_trunc('day', h.start_at, 'UTC'), 0, sum(h.event_count), sum(h.value_sum), max(h.value_max),
		(array_agg(h.last_value ORDER BY h.last_at DESC, h.last_event_id DESC))[1], max(h.last_at),
		(array_agg(h.last_event_id ORDER BY h.last_at DESC, h.last_event_id DESC))[1]
	FROM usage_buckets h
	WHERE h.merchant_id = $1 AND h.mode = $2 AND h.grain = 'hour' AND h.start_at >= $3 AND h.start_at < $4
	GROUP BY h.customer_id, h.meter_id, date_trunc('day', h.start_at, 'UTC')`
	rollupMoveSQL = `INSERT INTO usage_rollups (merchant_id, mode, through) VALUES ($1, $2, $3)
	ON CONFLICT (merchant_id, mode) DO UPDATE SET through = EXCLUDED.through`
)

// RollUp rolls up the day buckets of every day ended by now (UTC) in each
// scope with a meter, one transaction per scope, and returns how many
// scopes moved. Replicas may run it at once: the usage lock serializes
// them and the second finds nothing left to do.
func RollUp(ctx context.Context, db *store.DB, now time.Time) (int, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	var scopes []struct {
		MerchantID string      `db:"merchant_id"`
		Mode       tenant.Mode `db:"mode"`
	}
	if err := db.SelectContext(ctx, &scopes, rollupDueSQL, today); err != nil {
		return 0, store.Translate(err)
	}
	n := 0
	for _, sc := range scopes {
		s := tenant.Scope{MerchantID: sc.MerchantID, Mode: sc.Mode}
		moved, err := store.InTx(ctx, db, func(tx *store.Tx) (bool, error) { return rollUpScope(ctx, tx, s, today) })
		if err != nil {
			return n, err
		}
		if moved {
			n++
		}
	}
	return n, nil
}

// rollUpScope rolls up the scope's days before today not yet rolled up.
func rollUpScope(ctx context.Context, tx *store.Tx, s tenant.Scope, today time.Time) (bool, error) {
	if err := lockUsage(ctx, tx, s, true); err != nil {
		return false, err
	}
	var from *time.Time
	if err := tx.GetContext(ctx, &from, `SELECT max(through) FROM usage_rollups WHERE merchant_id = $1 AND mode = $2`, s.MerchantID, s.Mode); err != nil {
		return false, store.Translate(err)
	}
	if from != nil && !from.Before(today) {
		return false, nil
	}
	lo := "-infinity"
	if from != nil {
		lo = ts(*from)
	}
	for _, stmt := range []string{rollupDropSQL, rollupSQL} {
		if _, err := tx.ExecContext(ctx, stmt, s.MerchantID, s.Mode, lo, ts(today)); err != nil {
			return false, store.Translate(err)
		}
	}
	if _, err := tx.ExecContext(ctx, rollupMoveSQL, s.MerchantID, s.Mode, today); err != nil {
		return false, store.Translate(err)
	}
	return true, nil
}

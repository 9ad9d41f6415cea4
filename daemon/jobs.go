package daemon

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/alerts"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/idempotency"
	"github.com/tollgatehq/tollgate/internal/jobs"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// Periodic maintenance, run by the job runner once per period across
// replicas.
const (
	jobCreditExpiry   = "credit-expiry"
	jobMeterEventKeys = "meter-event-key-pruning"
	jobKeys           = "idempotency-key-pruning"
	jobEventRetention = "event-retention"
	jobOAuthPruning   = "oauth-pruning"
	jobBilling        = "subscription-billing"
	jobStatistics     = "table-statistics"
	jobAlerts         = "alert-evaluation"
	jobPartitions     = "partitions-ahead"
	jobRetention      = "usage-retention"
	jobRollup         = "usage-rollup"
	// freshChanges is how many rows a never-analysed table takes before
	// the statistics job analyses it.
	freshChanges = 500
)

// maintenanceJobs are the daemon's periodic jobs.
func maintenanceJobs(cfg Config, db *store.DB) []jobs.Job {
	return []jobs.Job{
		{
			// Balances never wait for it (reads leave expired remainders
			// out); it writes the expiry entries, so the interval only
			// bounds how long the ledger lags behind.
			Name: jobCreditExpiry, Periodic: true, Every: time.Minute, First: time.Second,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := credits.SweepExpired(ctx, db, now)
				return false, err
			},
		},
		{
			// Keys are promised for 35 days; the delete scans the key table,
			// so it runs daily.
			Name: jobMeterEventKeys, Periodic: true, Every: 24 * time.Hour, First: time.Hour,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := metering.PruneKeys(ctx, db, now.Add(-metering.MaxAge-time.Hour), now)
				return false, err
			},
		},
		{
			// Drops the feed's months past --event-retention, with their
			// deliveries; a month with a delivery still pending stays.
			Name: jobEventRetention, Periodic: true, Every: time.Hour, First: time.Minute,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := partitions.Drop(ctx, db, partitions.Events(), cfg.EventRetention, now)
				return false, err
			},
		},
		{
			// A new install's tables get statistics seconds after their
			// first rows instead of at autovacuum's first pass, a minute
			// or more later: until then key lookups may walk a merchant's
			// rows (store.AnalyzeFresh). Once every table has them, a run
			// is one read of pg_stat_user_tables.
			Name: jobStatistics, Periodic: true, Every: 5 * time.Second, First: 5 * time.Second,
			Run: func(ctx context.Context, _ time.Time) (bool, error) {
				_, err := store.AnalyzeFresh(ctx, db, freshChanges)
				return false, err
			},
		},
		{
			// Like meter events' keys: kept 35 days, pruned daily.
			Name: jobKeys, Periodic: true, Every: 24 * time.Hour, First: time.Hour,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := idempotency.Prune(ctx, db, now.Add(-idempotency.Kept-time.Hour), now)
				return false, err
			},
		},
		{
			// Partitions exist weeks (usage) and months (feed) ahead,
			// the first made by the migrations, so a runner stopped for
			// days still leaves writes a place; four runs a day keep that
			// margin.
			Name: jobPartitions, Periodic: true, Every: 6 * time.Hour, First: 10 * time.Second,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := partitions.Ensure(ctx, db, now)
				return false, err
			},
		},
		{
			// Rolls each finished day's hour buckets up into day buckets,
			// which summaries read in their place; until it runs they read
			// the hours, so a late run costs reads, never answers.
			Name: jobRollup, Periodic: true, Every: time.Hour, First: time.Minute,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				_, err := metering.RollUp(ctx, db, now)
				return false, err
			},
		},
		{
			// Drops whole weeks of usage events past --retention; a week
			// an unrated period still needs stays until it is rated.
			Name: jobRetention, Periodic: true, Every: time.Hour, First: 10 * time.Minute,
			Run: func(ctx context.Context, now time.Time) (bool, error) {
				if cfg.Retention <= 0 {
					return false, nil
				}
				_, err := partitions.Drop(ctx, db, partitions.MeterEvents(), cfg.Retention, now)
				return false, err
			},
		},
		{
			// Expired codes and tokens are kept a day so replays are still
			// recognised, then deleted in batches.
			Name: jobOAuthPruning, Periodic: true, Every: time.Hour, First: time.Minute,
			Run: func(ctx context.Context, _ time.Time) (bool, error) {
				_, err := oauth.Prune(ctx, db)
				return false, err
			},
		},
	}
}

// alertJob fires alerts from the checks ingestion and debits leave; every
// replica may run it (claims use SKIP LOCKED, firings a unique key). It
// polls each second rather than waking at every commit: the checks of a
// second make one evaluation per customer, which keeps alerts from taking
// ingestion's CPU, and an alert still fires within about a second.
func alertJob(db *store.DB) jobs.Job {
	e := &alerts.Evaluator{DB: db}
	return jobs.Job{Name: jobAlerts, Every: time.Second, Run: e.Step}
}

// billingJob runs due subscription actions (renewals, metered rating,
// dunning, expiry) in batches; every replica may run it, claiming with SKIP
// LOCKED.
func billingJob(b *subscriptions.Biller) jobs.Job {
	return jobs.Job{
		Name: jobBilling, Every: 5 * time.Second, Run: b.Step,
		Next: func(ctx context.Context, _ time.Time) (time.Time, bool, error) { return b.NextDue(ctx) },
	}
}

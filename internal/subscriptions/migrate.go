package subscriptions

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// MigrationInput is a POST /v1/plans/{id}/migrate request.
type MigrationInput struct {
	To      string
	Preview bool
}

// DecodeMigration reads the migration request's schema.
func DecodeMigration(o *fields.Object) (MigrationInput, error) {
	in := MigrationInput{To: o.RequiredString("to", 1, maxID)}
	if b := o.Bool("preview"); b != nil {
		in.Preview = *b
	}
	return in, o.Err()
}

// Migration is a plan migration's outcome.
type Migration struct {
	From, To      string
	Subscriptions int64
	Before, After money.Amount
}

// Wire is the migration's public form.
func (m Migration) Wire() wire.PlanMigration {
	return wire.PlanMigration{Object: "plan_migration", From: m.From, To: m.To, Subscriptions: m.Subscriptions,
		AmountBefore: m.Before.String(), AmountAfter: m.After.String(), Effective: AtPeriodEnd}
}

// migrateBatch bounds the subscriptions one transaction of a migration
// schedules: memory and lock time stay bounded whatever the plan's size.
const migrateBatch = 500

// migratable are the statuses a migration moves.
const migratable = `status IN ('trialing', 'active', 'past_due')`

// MigratePlan schedules a period_end change to in.To for every live
// subscription of the scope's plan, each emitting subscription.updated, in
// batches of its own transactions (or all in tx, a keyed request's); a
// migration interrupted half way is finished by running it again, which
// schedules the same changes. A customer who already has a live
// subscription to in.To is left out. preview counts and sums only. Fails
// with resource_not_found (the plan) or invalid_request naming to.
func MigratePlan(ctx context.Context, db *store.DB, tx *store.Tx, s tenant.Scope, planID string, in MigrationInput, now time.Time) (Migration, error) {
	var q store.Querier = db
	if tx != nil {
		q = tx
	}
	from, ok, err := plans.Get(ctx, q, planID)
	if err != nil {
		return Migration{}, err
	}
	if !ok || from.Scope() != s {
		return Migration{}, apperr.New(apperr.ResourceNotFound, "no plan %q", planID)
	}
	to, ok, err := plans.Get(ctx, q, in.To)
	if err != nil {
		return Migration{}, err
	}
	switch {
	case !ok || to.Scope() != s:
		return Migration{}, apperr.Field("to", "no plan %q in this account and mode", in.To)
	case to.UsageType != from.UsageType:
		return Migration{}, apperr.Field("to", "%s is %s and %s is %s: a change keeps the usage type", to.ID, to.UsageType, from.ID, from.UsageType)
	case to.ID == from.ID:
		return Migration{}, apperr.Field("to", "is the plan itself")
	}
	m := Migration{From: from.ID, To: to.ID}
	if in.Preview {
		return m, countMigration(ctx, q, s, from.ID, to, &m)
	}
	now = now.Truncate(time.Microsecond)
	var after int64
	for {
		batch := func(tx *store.Tx) (int, error) { return migrateSome(ctx, tx, s, from.ID, to, now, &after, &m) }
		var n int
		if tx != nil {
			n, err = batch(tx)
		} else {
			n, err = store.InTx(ctx, db, batch)
		}
		if err != nil || n < migrateBatch {
			return m, err
		}
	}
}

// countMigration counts and sums the subscriptions a migration would move.
func countMigration(ctx context.Context, q store.Querier, s tenant.Scope, fromID string, to plans.Plan, m *Migration) error {
	var row struct {
		N   int64  `db:"n"`
		Sum string `db:"sum"`
	}
	err := q.GetContext(ctx, &row, `SELECT count(*) AS n, coalesce(sum(amount), 0)::text AS sum FROM subscriptions s
		WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3 AND `+migratable+` AND NOT `+holdsTarget,
		s.MerchantID, s.Mode, fromID, to.ID)
	if err != nil {
		return store.Translate(err)
	}
	before, err := money.Parse(row.Sum)
	if err != nil {
		return apperr.New(apperr.Internal, "sum of amounts: %v", err)
	}
	m.Subscriptions, m.Before, m.After = row.N, before, to.Amount*money.Amount(row.N)
	if row.N > 0 && m.After/money.Amount(row.N) != to.Amount {
		return apperr.Field("to", "the sum of the amounts is too large")
	}
	return nil
}

// holdsTarget: the subscription's customer already has a live subscription
// to the target plan ($4).
const holdsTarget = `EXISTS (SELECT 1 FROM subscriptions o WHERE o.merchant_id = s.merchant_id AND o.mode = s.mode
	AND o.plan_id = $4 AND o.customer_id = s.customer_id AND o.status IN ('trialing', 'active', 'past_due'))`

// migrateSome schedules the change on the next batch of subscriptions after
// seq *after, adding them to m; it returns how many it claimed.
func migrateSome(ctx context.Context, tx *store.Tx, s tenant.Scope, fromID string, to plans.Plan, now time.Time, after *int64, m *Migration) (int, error) {
	var xs []Subscription
	err := tx.SelectContext(ctx, &xs, `SELECT `+qualifiedColumns+` FROM subscriptions s
		WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3 AND seq > $4 AND `+migratable+`
		ORDER BY seq LIMIT $5 FOR UPDATE`, s.MerchantID, s.Mode, fromID, *after, migrateBatch)
	if err != nil {
		return 0, store.Translate(err)
	}
	if len(xs) == 0 {
		return 0, nil
	}
	*after = xs[len(xs)-1].Seq
	held, err := customersOn(ctx, tx, s, to.ID, xs)
	if err != nil {
		return 0, err
	}
	var moving []Subscription
	for _, x := range xs {
		if held[deref(x.CustomerID)] {
			continue
		}
		if m.Before, err = money.Add(m.Before, *x.Amount); err != nil {
			return 0, apperr.Field("to", "the sum of the amounts is too large")
		}
		if m.After, err = money.Add(m.After, to.Amount); err != nil {
			return 0, apperr.Field("to", "the sum of the amounts is too large")
		}
		m.Subscriptions++
		if x.PendingPlanID != nil && *x.PendingPlanID == to.ID {
			continue // scheduled already: a migration run again
		}
		end := *x.CurrentPeriodEnd
		x.PendingPlanID, x.PendingChangeAt = &to.ID, &end
		moving = append(moving, x)
	}
	if len(moving) == 0 {
		return len(xs), nil
	}
	saved, err := saveTerms(ctx, tx, moving...)
	if err != nil {
		return 0, err
	}
	evs := make([]events.Pending, len(saved))
	for i, x := range saved {
		evs[i] = events.Pending{Scope: s, Type: events.SubscriptionUpdated, At: now, Data: x.Wire()}
	}
	return len(xs), events.EmitMany(ctx, tx, evs)
}

// customersOn returns which of the subscriptions' customers have a live
// subscription to planID.
func customersOn(ctx context.Context, tx *store.Tx, s tenant.Scope, planID string, xs []Subscription) (map[string]bool, error) {
	custs := make([]string, 0, len(xs))
	for _, x := range xs {
		custs = append(custs, deref(x.CustomerID))
	}
	var held []string
	err := tx.SelectContext(ctx, &held, `SELECT customer_id FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3
		AND customer_id = ANY ($4) AND status IN ('trialing', 'active', 'past_due')`, s.MerchantID, s.Mode, planID, pq.StringArray(custs))
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make(map[string]bool, len(held))
	for _, c := range held {
		out[c] = true
	}
	return out, nil
}

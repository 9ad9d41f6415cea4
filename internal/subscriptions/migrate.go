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
	// Unauthorized counts the subscriptions left out because their payer
	// authorized less than To's amount; Reauthorize lists the first
	// maxListed of them.
	Unauthorized int64
	Reauthorize  []wire.MigrationAuthorization
}

// Wire is the migration's public form.
func (m Migration) Wire() wire.PlanMigration {
	list := m.Reauthorize
	if list == nil {
		list = []wire.MigrationAuthorization{}
	}
	return wire.PlanMigration{Object: "plan_migration", From: m.From, To: m.To, Subscriptions: m.Subscriptions,
		AmountBefore: m.Before.String(), AmountAfter: m.After.String(), Effective: AtPeriodEnd,
		AuthorizationRequired: m.Unauthorized, NeedsAuthorization: list}
}

// migrateBatch bounds the subscriptions one transaction of a migration
// schedules: memory and lock time stay bounded whatever the plan's size.
const migrateBatch = 500

// maxListed bounds the subscriptions a migration's answer lists as needing
// a new authorization (all are counted); they are the oldest, and running
// the migration again once they have authorized lists the next ones.
const maxListed = 1000

// migratable are the statuses a migration moves.
const migratable = `status IN ('trialing', 'active', 'past_due')`

// MigratePlan schedules a period_end change to in.To for every live
// subscription of the scope's plan, each emitting subscription.updated, in
// batches of its own transactions (or all in tx, a keyed request's); a
// migration interrupted half way is finished by running it again, which
// schedules the same changes. A customer who already has a live
// subscription to in.To is left out. So is a subscription whose payer
// authorized less per period than in.To's amount: the payer never agreed
// to pay it, so it is counted and listed with the page at baseURL where
// the payer authorizes the change (as a change's authorization_required
// says), and moves only then. preview counts, sums and lists the same and
// schedules nothing. Fails with resource_not_found (the plan) or
// invalid_request naming to.
func MigratePlan(ctx context.Context, db *store.DB, tx *store.Tx, s tenant.Scope, planID string, in MigrationInput, baseURL string, now time.Time) (Migration, error) {
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
	now = now.Truncate(time.Microsecond)
	b := migrationBatch{s: s, fromID: from.ID, to: to, baseURL: baseURL, lock: !in.Preview}
	for {
		var n int
		switch {
		case in.Preview:
			_, n, err = b.next(ctx, q, &m)
		case tx != nil:
			n, err = b.schedule(ctx, tx, &m, now)
		default:
			n, err = store.InTx(ctx, db, func(tx *store.Tx) (int, error) { return b.schedule(ctx, tx, &m, now) })
		}
		if err != nil || n < migrateBatch {
			return m, err
		}
	}
}

// migrationBatch walks a plan's live subscriptions in batches, by seq.
type migrationBatch struct {
	s       tenant.Scope
	fromID  string
	to      plans.Plan
	baseURL string
	lock    bool  // claim the rows (a migration, not its preview)
	after   int64 // the last seq read
}

// schedule sets the pending change on the next batch's subscriptions that
// move and emits their subscription.updated; it returns how many
// subscriptions it read.
func (b *migrationBatch) schedule(ctx context.Context, tx *store.Tx, m *Migration, now time.Time) (int, error) {
	moving, n, err := b.next(ctx, tx, m)
	if err != nil || len(moving) == 0 {
		return n, err
	}
	for i := range moving {
		end := *moving[i].CurrentPeriodEnd
		moving[i].PendingPlanID, moving[i].PendingChangeAt = &b.to.ID, &end
	}
	saved, err := saveTerms(ctx, tx, moving...)
	if err != nil {
		return 0, err
	}
	evs := make([]events.Pending, len(saved))
	for i, x := range saved {
		evs[i] = events.Pending{Scope: b.s, Type: events.SubscriptionUpdated, At: now, Data: x.Wire()}
	}
	return n, events.EmitMany(ctx, tx, evs)
}

// next reads the next batch (locked when b.lock) and adds it to m: the
// subscriptions that move are counted and summed, and returned unless
// already scheduled (a migration run again); those whose payer must
// authorize more are counted and listed; a customer already on the target
// plan is left out. It returns how many subscriptions it read.
func (b *migrationBatch) next(ctx context.Context, q store.Querier, m *Migration) ([]Subscription, int, error) {
	lock := ""
	if b.lock {
		lock = " FOR UPDATE"
	}
	var xs []Subscription
	err := q.SelectContext(ctx, &xs, `SELECT `+qualifiedColumns+` FROM subscriptions s
		WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3 AND seq > $4 AND `+migratable+`
		ORDER BY seq LIMIT $5`+lock, b.s.MerchantID, b.s.Mode, b.fromID, b.after, migrateBatch)
	if err != nil {
		return nil, 0, store.Translate(err)
	}
	if len(xs) == 0 {
		return nil, 0, nil
	}
	b.after = xs[len(xs)-1].Seq
	held, err := customersOn(ctx, q, b.s, b.to.ID, xs)
	if err != nil {
		return nil, 0, err
	}
	var moving []Subscription
	for _, x := range xs {
		if held[deref(x.CustomerID)] {
			continue
		}
		if b.to.Amount > x.authorized() {
			m.Unauthorized++
			if len(m.Reauthorize) < maxListed {
				m.Reauthorize = append(m.Reauthorize, wire.MigrationAuthorization{SubscriptionID: x.ID, AuthorizedAmount: x.authorized().String(),
					CheckoutURL: ReauthorizationURL(b.baseURL, x.ID, b.to.ID, AtPeriodEnd)})
			}
			continue
		}
		if m.Before, err = money.Add(m.Before, *x.Amount); err != nil {
			return nil, 0, apperr.Field("to", "the sum of the amounts is too large")
		}
		if m.After, err = money.Add(m.After, b.to.Amount); err != nil {
			return nil, 0, apperr.Field("to", "the sum of the amounts is too large")
		}
		m.Subscriptions++
		if x.PendingPlanID != nil && *x.PendingPlanID == b.to.ID {
			continue // scheduled already: a migration run again
		}
		moving = append(moving, x)
	}
	return moving, len(xs), nil
}

// customersOn returns which of the subscriptions' customers have a live
// subscription to planID.
func customersOn(ctx context.Context, q store.Querier, s tenant.Scope, planID string, xs []Subscription) (map[string]bool, error) {
	custs := make([]string, 0, len(xs))
	for _, x := range xs {
		custs = append(custs, deref(x.CustomerID))
	}
	var held []string
	err := q.SelectContext(ctx, &held, `SELECT customer_id FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND plan_id = $3
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

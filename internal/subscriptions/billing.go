package subscriptions

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/pricing"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Policy is how subscriptions are billed (serve --dunning-schedule,
// --usage-grace).
type Policy struct {
	// Dunning lists when a failed charge is retried, as offsets from the
	// first failure (by default 1, 3 and 5 days); all failing cancels.
	Dunning []time.Duration
	// UsageGrace delays a metered period's rating past its end, so usage
	// that arrives late still counts; usage later than that is not billed.
	UsageGrace time.Duration
}

// DefaultPolicy is the daemon's default: retries 24 h, 72 h and 120 h after the
// failure; metered periods rated an hour after they end.
func DefaultPolicy() Policy {
	return Policy{Dunning: []time.Duration{24 * time.Hour, 72 * time.Hour, 120 * time.Hour}, UsageGrace: time.Hour}
}

// Biller runs subscriptions' due actions: renewals, metered rating, dunning
// retries, revocation and expiry.
type Biller struct {
	DB *store.DB
	// Rail is the rail of a mode; ok=false when the mode has none (live
	// without a chain configured), and its subscriptions wait.
	Rail   func(tenant.Mode) (rail.Rail, bool)
	Policy Policy
	// Batch bounds the subscriptions one transaction acts on.
	Batch int
	// Clock is the wall clock (a charge still pending is asked about again
	// a little later by it).
	Clock clock.Clock
}

// Step acts on the subscriptions due by their merchants' clocks (the wall
// clock plus a test clock's offset): it finds the scopes (merchant and
// mode) of the first batch due, by a read that locks nothing, then acts on
// a batch of each scope's, claiming them FOR UPDATE SKIP LOCKED so replicas
// share the work, a merchant at a time so a row lock never spans
// merchants. more is true when a scope's batch was full.
func (b *Biller) Step(ctx context.Context, wall time.Time) (more bool, err error) {
	var rows []struct {
		MerchantID string      `db:"merchant_id"`
		Mode       tenant.Mode `db:"mode"`
		AheadUS    int64       `db:"ahead_us"`
	}
	if err := b.DB.SelectContext(ctx, &rows, dueScopes, b.batch(), wall); err != nil {
		return false, store.Translate(err)
	}
	// A test scope due by the wall clock and by its clock comes twice:
	// the clock, the later time, holds.
	ahead := map[tenant.Scope]int64{}
	var scopes []tenant.Scope
	for _, r := range rows {
		s := tenant.Scope{MerchantID: r.MerchantID, Mode: r.Mode}
		if a, seen := ahead[s]; !seen {
			scopes = append(scopes, s)
		} else if a >= r.AheadUS {
			continue
		}
		ahead[s] = r.AheadUS
	}
	for _, s := range scopes {
		upTo := wall.Add(time.Duration(ahead[s]) * time.Microsecond)
		_, full, err := b.step(ctx, claimDue, b.batch(), s.MerchantID, s.Mode, upTo)
		if err != nil {
			return false, err
		}
		more = more || full
	}
	return more, nil
}

// CatchUp acts, in time order, on every subscription of the scope due up to
// upTo, each at its own due time: the test clock's advance. It waits for
// subscriptions another worker is acting on, so when it returns nothing of
// the scope is due up to upTo.
func (b *Biller) CatchUp(ctx context.Context, s tenant.Scope, upTo time.Time) error {
	for {
		n, _, err := b.step(ctx, claimScope, b.batch(), s.MerchantID, s.Mode, upTo)
		if err != nil || n == 0 {
			return err
		}
	}
}

func (b *Biller) batch() int {
	if b.Batch <= 0 {
		return 500
	}
	return b.Batch
}

// NextDue is when the earliest subscription action falls due by the wall
// clock, for the job's sleep (test clocks run ahead, so their work is found
// by the poll or by their advance).
func (b *Biller) NextDue(ctx context.Context) (time.Time, bool, error) {
	var t *time.Time
	err := b.DB.GetContext(ctx, &t, nextDueSQL)
	if err != nil || t == nil {
		return time.Time{}, false, store.Translate(err)
	}
	return *t, true, nil
}

// nextDueSQL reads the first entry of the due index (keyed by the UTC
// time: migration 071).
const nextDueSQL = `SELECT min(next_action_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM subscriptions
	WHERE next_action_at IS NOT NULL`

// dueScopes finds the scopes with subscriptions due, each with its test
// clock's offset; it locks nothing. Each branch reads an index in the
// order of its range and stops early, so its cost follows the rows due,
// not the rows stored: the first batch due by the wall clock (due by any
// merchant's clock, since test clocks only run ahead), from the due index
// (keyed by the UTC time: migration 071);
// and each test clock's merchant whose test-mode subscriptions it has made
// due, one probe of the scope's due index per clock. One range widened to
// the largest offset, as before, walked every subscription due within it,
// of every merchant, whenever one test clock ran far ahead.
const dueScopes = `SELECT d.merchant_id, d.mode, 0::bigint AS ahead_us
		FROM (SELECT s.merchant_id, s.mode FROM subscriptions s
			WHERE (s.next_action_at AT TIME ZONE 'UTC') <= ($2::timestamptz AT TIME ZONE 'UTC')
			ORDER BY (s.next_action_at AT TIME ZONE 'UTC') LIMIT $1) d
	UNION
	SELECT c.merchant_id, 'test', c.ahead_us FROM test_clocks c
		WHERE c.ahead_us > 0 AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.merchant_id = c.merchant_id AND s.mode = 'test'
			AND s.next_action_at <= $2::timestamptz + c.ahead_us * interval '1 microsecond')`

// The claims of one scope's subscriptions due up to a time ($4), oldest due
// first, from the scope's due index (migration 071): by the job, skipping
// those another worker holds, or by a test clock's advance, waiting for
// them.
const (
	claimDue = `SELECT ` + qualifiedColumns + ` FROM subscriptions s
		WHERE s.merchant_id = $2 AND s.mode = $3 AND s.next_action_at <= $4
		ORDER BY s.next_action_at LIMIT $1 FOR UPDATE OF s SKIP LOCKED`
	claimScope = `SELECT ` + qualifiedColumns + ` FROM subscriptions s
		WHERE s.merchant_id = $2 AND s.mode = $3 AND s.next_action_at <= $4
		ORDER BY s.next_action_at LIMIT $1 FOR UPDATE OF s`
)

// step claims a batch with claim, decides each subscription's action at its
// due time, settles the charges on the rail, and records the outcomes, in
// one transaction (the rail keeps its own ledger; asking it again after a
// crash answers the same settlements). Only the actions due before any
// acted-on subscription can fall due again are taken (see inOrder); the
// rest stay due for the next step. n counts the actions taken; more is
// true when anything may be left: the claim was full or some of it was
// left.
func (b *Biller) step(ctx context.Context, claim string, args ...any) (n int, more bool, err error) {
	err = b.DB.InTx(ctx, func(tx *store.Tx) error {
		var xs []Subscription
		if err := tx.SelectContext(ctx, &xs, claim, args...); err != nil {
			return err
		}
		more = len(xs) == b.batch()
		if len(xs) == 0 {
			return nil
		}
		usage, err := periodUsage(ctx, tx, xs)
		if err != nil {
			return err
		}
		next, err := pendingPlans(ctx, tx, xs)
		if err != nil {
			return err
		}
		actions := make([]*action, 0, len(xs))
		for _, x := range xs {
			a, err := b.decide(x, usage[x.ID], next[x.ID])
			if err != nil {
				return err
			}
			actions = append(actions, a)
		}
		taken := b.inOrder(actions)
		n, more = len(taken), more || len(taken) < len(actions)
		if err := b.settle(ctx, taken); err != nil {
			return err
		}
		return b.record(ctx, tx, taken)
	})
	return n, more, err
}

// rate prices a metered subscription's usage with its pricing model, capped
// at its amount; lines explain it.
func rate(x Subscription, q *big.Int) (money.Amount, json.RawMessage, error) {
	m, err := pricing.Decode(x.PricingModel)
	if err != nil {
		return 0, nil, fmt.Errorf("subscription %s: stored pricing model: %w", x.ID, err)
	}
	r := m.Rate(q)
	if !r.Billable() {
		b, err := json.Marshal(pricing.WireLines(r.Lines))
		return 0, b, err
	}
	charged, lines := pricing.Cap(r, *x.Amount)
	b, err := json.Marshal(pricing.WireLines(lines))
	return charged, b, err
}

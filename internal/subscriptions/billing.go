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
// clock plus a test clock's offset): it finds the merchants of the first
// batch due, by a read that locks nothing, then acts on a batch of each
// merchant's, claiming them FOR UPDATE SKIP LOCKED so replicas share the
// work, a merchant at a time so a row lock never spans merchants. more is
// true when a merchant's batch was full.
func (b *Biller) Step(ctx context.Context, wall time.Time) (more bool, err error) {
	var ahead int64
	if err := b.DB.GetContext(ctx, &ahead, `SELECT coalesce(max(ahead_us), 0) FROM test_clocks`); err != nil {
		return false, store.Translate(err)
	}
	var merchants []string
	if err := b.DB.SelectContext(ctx, &merchants, dueMerchants, b.batch(), wall, ahead); err != nil {
		return false, store.Translate(err)
	}
	for _, m := range merchants {
		_, full, err := b.step(ctx, claimDue, b.batch(), wall, m)
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
	err := b.DB.GetContext(ctx, &t, `SELECT min(next_action_at) FROM subscriptions WHERE next_action_at IS NOT NULL`)
	if err != nil || t == nil {
		return time.Time{}, false, store.Translate(err)
	}
	return *t, true, nil
}

// dueMerchants finds the merchants of the first subscriptions due by their
// merchants' clocks (the range on the due index is widened by $3, the
// largest test-clock offset); it locks nothing.
const dueMerchants = `SELECT DISTINCT merchant_id FROM (SELECT s.merchant_id FROM subscriptions s
		LEFT JOIN test_clocks c ON c.merchant_id = s.merchant_id AND s.mode = 'test'
		WHERE s.next_action_at <= $2::timestamptz + $3::bigint * interval '1 microsecond'
			AND s.next_action_at <= $2::timestamptz + coalesce(c.ahead_us, 0) * interval '1 microsecond'
		ORDER BY s.next_action_at LIMIT $1) d`

// The claims: one merchant's due by its clock, or one scope's up to a
// time, oldest due first.
const (
	claimDue = `SELECT ` + qualifiedColumns + ` FROM subscriptions s
		LEFT JOIN test_clocks c ON c.merchant_id = s.merchant_id AND s.mode = 'test'
		WHERE s.merchant_id = $3 AND s.next_action_at <= $2::timestamptz
				+ (SELECT coalesce(max(ahead_us), 0) FROM test_clocks WHERE merchant_id = $3) * interval '1 microsecond'
			AND s.next_action_at <= $2::timestamptz + coalesce(c.ahead_us, 0) * interval '1 microsecond'
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

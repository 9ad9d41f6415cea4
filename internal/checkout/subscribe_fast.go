package checkout

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// A plan checkout the test rail accepts is two statements and no explicit
// transaction, as an invoice payment is (see invoice_fast.go): a read of
// the plan with the customer, the activation index and the terms, then one
// statement that creates the customer if it is new and, only if it then
// has no live subscription to the plan, writes the subscription, the
// activation's settlement, the first payment, subscription.active and its
// deliveries. A customer created meanwhile by another checkout, a live
// subscription (already_subscribed, or this very activation recorded), a
// settlement already in the ledger, a declined wallet, a plan that grants
// features, a live rail: all go the locked way (subscribeTx), nothing
// written. Before: BEGIN, plan, customer read, customer insert, activation
// index, terms, settlement, subscription, payment, event, COMMIT (11 round
// trips); now 2.

// planTerms is a plan with what a checkout of it by one customer needs.
type planTerms struct {
	plans.Plan
	// CustomerID is nil when the customer is new.
	CustomerID      *string `db:"customer_id"`
	ActivationIndex int     `db:"activation_index"`
	Wallet          *string `db:"wallet"`
	AheadUS         *int64  `db:"ahead_us"`
}

const planTermsSQL = `SELECT ` + plans.Columns + `, c.id AS customer_id,
		(SELECT count(*) FROM subscriptions x
			WHERE x.merchant_id = p.merchant_id AND x.mode = p.mode AND x.plan_id = p.id AND x.customer_id = c.id) AS activation_index,
		(SELECT w.address FROM settlement_wallets w
			WHERE w.merchant_id = p.merchant_id AND w.mode = p.mode AND w.replaced_at IS NULL) AS wallet,
		(SELECT t.ahead_us FROM test_clocks t WHERE t.merchant_id = p.merchant_id) AS ahead_us
	FROM plans p JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		LEFT JOIN customers c ON c.merchant_id = p.merchant_id AND c.mode = p.mode AND c.external_customer_id = $2
	WHERE p.id = $1`

// subscribeSQL records a plan checkout the test rail settles, in one
// statement. The subscription is inserted only if the customer was found
// by the read or created here, and only if it has no live subscription to
// the plan (subscriptions_live); the settlement, the payment (a licensed
// plan's, $19 not null) and the event are inserted only with it. The
// settlement and the payment are plain inserts: one already in the ledger
// fails the whole statement. The event and its deliveries are
// events.Emit's statement.
const subscribeSQL = `WITH cus AS (
		INSERT INTO customers (merchant_id, mode, id, external_customer_id)
		SELECT $1, $2, $6, $20 WHERE $21::boolean
		ON CONFLICT ON CONSTRAINT customers_external DO NOTHING RETURNING id
	), sub AS (
		INSERT INTO subscriptions (merchant_id, mode, id, plan_id, product_id, customer_id, payer, status,
			usage_type, amount, interval, interval_days, meter_id, pricing_model, anchor, period_index, current_period_start,
			current_period_end, next_action_at, authorization_key, created_at, latest_payment_id)
		SELECT $1, $2, $3, $4, $5, $6, $7, 'active', $8, $9::numeric, $10, $11::integer, $12, $13::jsonb, $14::timestamptz, 0,
			$15::timestamptz, $16::timestamptz, $17::timestamptz, $18, $14::timestamptz, $19
		WHERE NOT $21::boolean OR EXISTS (SELECT 1 FROM cus)
		ON CONFLICT (merchant_id, mode, plan_id, customer_id) WHERE status IN ('active', 'past_due') DO NOTHING
		RETURNING ` + subscriptions.Columns + `
	), st AS (
		INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
		SELECT $1, $2, $18, 'activate', $18, $7, $22, $23::numeric, 'succeeded', $24, $14::timestamptz FROM sub RETURNING key
	), pay AS (
		INSERT INTO payments (merchant_id, mode, id, subscription_id, customer_id, amount, payer, payee, network, tx_hash, status,
			confirmed_at, period_start, period_end, settlement_key, created_at)
		SELECT $1, $2, $19, $3, $6, $23::numeric, $7, $22, $25, $24, 'succeeded',
			$14::timestamptz, $15::timestamptz, $16::timestamptz, st.key, $14::timestamptz
		FROM st WHERE $19::text IS NOT NULL RETURNING 1
	), ev AS (
		INSERT INTO events (merchant_id, mode, id, type, data, occurred_at)
		SELECT $1, $2, $26, $27, $28::jsonb, $14::timestamptz FROM sub RETURNING id, type
	), d AS (
		INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id)
		SELECT w.merchant_id, w.mode, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ev.id, w.id
		FROM webhook_endpoints w, ev
		WHERE w.merchant_id = $1 AND w.mode = $2 AND w.enabled AND w.removed_at IS NULL
			AND (cardinality(w.event_types) = 0 OR ev.type = ANY (w.event_types))
		RETURNING 1
	)
	SELECT sub.*, (SELECT count(*) FROM d) AS deliveries FROM sub`

// subscribeFast checks out a plan in two statements when it can; done=false
// leaves the checkout to the locked path, nothing written.
func (e Env) subscribeFast(ctx context.Context, planID string, in Input) (rail.Settlement, subscriptions.Subscription, bool, error) {
	w, ok, err := e.prepareActivation(ctx, planID, in)
	if err != nil || !ok {
		return w.st, w.x, err != nil, err
	}
	res := activationGroup(e.DB).do(w)
	if res.err != nil || !res.ok {
		return w.st, w.x, res.err != nil, res.err
	}
	return w.st, res.sub, true, nil
}

// prepareActivation reads what a checkout of the plan needs and decides
// its write; ok=false leaves it to the locked path.
func (e Env) prepareActivation(ctx context.Context, planID string, in Input) (w activationWrite, ok bool, err error) {
	// The payer as both modes normalise it, so the customer can be read
	// with the plan; the plan's mode checks it below.
	ext := externalID(in, strings.ToLower(strings.TrimSpace(in.Payer)))
	if ext == "" || utf8.RuneCountInString(ext) > customers.MaxExternalIDLen {
		return w, false, nil
	}
	var rows []planTerms
	if err := e.DB.SelectContext(ctx, &rows, planTermsSQL, planID, ext); err != nil {
		return w, false, store.Translate(err)
	}
	if len(rows) == 0 {
		return w, false, nil
	}
	p := rows[0].Plan
	s := p.Scope()
	rl, _ := e.Rail(s.Mode)
	decider, ok := rl.(rail.Deciding)
	if !ok || len(p.Features()) > 0 {
		return w, false, nil
	}
	who, err := payer(s, in.Payer)
	if err != nil || externalID(in, who) != ext {
		return w, false, nil
	}
	payee, now, err := e.termsOf(s, nil, rows[0].Wallet, rows[0].AheadUS)
	if err != nil {
		return w, false, nil
	}
	custID, isNew := id.New("cus"), rows[0].CustomerID == nil
	if !isNew {
		custID = *rows[0].CustomerID
	}
	st, ok := decider.Decide(activationOf(s, p, custID, who, rows[0].ActivationIndex, payee, now))
	if !ok || st.Status != rail.Succeeded {
		return w, false, nil
	}
	x, _ := subscriptions.NewActivation(subscriptions.ActivateInput{Plan: p, CustomerID: custID, Payer: who,
		Activation: st, UsageGrace: e.UsageGrace, Now: st.At})
	data, err := json.Marshal(x.Wire())
	if err != nil {
		return w, false, err
	}
	return activationWrite{x: x, st: st, ext: ext, isNew: isNew, eventID: id.New("evt"), data: string(data)}, true, nil
}

// activationWrite is one checkout's write, everything decided.
type activationWrite struct {
	x       subscriptions.Subscription
	st      rail.Settlement
	ext     string
	isNew   bool
	eventID string
	data    string
}

// activationResult is its outcome: ok=false when nothing was written
// (the locked path is to decide).
type activationResult struct {
	sub        subscriptions.Subscription
	ok         bool
	deliveries bool
	err        error
}

// writeActivation writes one checkout in one statement (subscribeSQL).
func writeActivation(ctx context.Context, db *store.DB, w activationWrite) activationResult {
	x, st := w.x, w.st
	var pricing *string
	if len(x.PricingModel) > 0 {
		v := string(x.PricingModel)
		pricing = &v
	}
	var out []struct {
		subscriptions.Subscription
		Deliveries int `db:"deliveries"`
	}
	err := db.SelectContext(ctx, &out, subscribeSQL, x.MerchantID, x.Mode, x.ID, x.PlanID, x.ProductID, x.CustomerID, x.Payer,
		x.UsageType, x.Amount, x.Interval, x.IntervalDays, x.MeterID, pricing, x.CreatedAt, x.CurrentPeriodStart,
		x.CurrentPeriodEnd, x.NextActionAt, st.Key, x.LatestPaymentID, w.ext, w.isNew, st.Payee, st.Amount, st.TxHash,
		st.Network, w.eventID, events.SubscriptionActive, w.data)
	switch {
	case store.UniqueViolation(err, "") || store.Retryable(err):
		// A settlement or payment already in the ledger.
		return activationResult{}
	case err != nil:
		return activationResult{err: store.Translate(err)}
	case len(out) == 0:
		// The customer was created by another checkout since the read,
		// or has a live subscription to the plan.
		return activationResult{}
	}
	return activationResult{sub: out[0].Subscription, ok: true, deliveries: out[0].Deliveries > 0}
}

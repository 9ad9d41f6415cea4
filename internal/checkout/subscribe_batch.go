package checkout

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// batchTimeout bounds a batch's statement: it runs for several requests,
// so no one request's context cancels it.
const batchTimeout = 30 * time.Second

// runActivations writes a batch of checkouts in one statement
// (subscribeBatchSQL). A batch whose statement fails (one write's
// settlement already in the ledger fails them all) is written one by one.
func runActivations(db *store.DB, calls []*batch.Call[activationWrite, activationResult]) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	err := writeActivations(ctx, db, calls)
	if err != nil && len(calls) > 1 {
		for _, c := range calls {
			one := []*batch.Call[activationWrite, activationResult]{c}
			if err := writeActivations(ctx, db, one); err != nil {
				c.Out = failedWrite(err)
			}
		}
	} else if err != nil {
		calls[0].Out = failedWrite(err)
	}
	for _, c := range calls {
		if c.Out.deliveries {
			db.Notify(events.DeliveryChannel)
			return
		}
	}
}

// failedWrite is the outcome of a write whose statement failed: a
// settlement or payment already in the ledger (or a deadlock with another
// batch) leaves the checkout to the locked path; anything else is an error.
func failedWrite(err error) activationResult {
	if store.UniqueViolation(err, "") || store.Retryable(err) {
		return activationResult{}
	}
	return activationResult{err: store.Translate(err)}
}

// subscribeBatchSQL records plan checkouts the test rail settles, in one
// statement, one array element a checkout of any merchant and plan. A
// checkout's customer is created if new; its subscription is inserted only
// if the customer was found by the read or created here (not by another
// checkout of the batch or another transaction first), and only if it has
// no live subscription to the plan (subscriptions_live; another checkout of
// the batch may have made it); its settlement, payment (a licensed plan's:
// payment_id not null) and event are inserted only with it. A guessed
// checkout (nothing read: see prepareActivation) is written only if its
// merchant's wallet and test clock are still those it was decided with;
// with a new customer, as guessed, and no other checkout can have the
// customer's activation index. The settlement and the payment are plain
// inserts: one already in the ledger fails the whole statement. The event
// and its deliveries are events.EmitMany's statement.
const subscribeBatchSQL = `WITH v AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::numeric[], $10::text[], $11::integer[], $12::text[], $13::jsonb[], $14::timestamptz[], $15::timestamptz[],
			$16::timestamptz[], $17::timestamptz[], $18::text[], $19::text[], $20::text[], $21::boolean[], $22::text[],
			$23::numeric[], $24::text[], $25::text[], $26::text[], $27::text[], $28::jsonb[], $29::boolean[], $30::text[], $31::bigint[])
		AS v(merchant_id, mode, id, plan_id, product_id, customer_id, payer, usage_type, amount, interval, interval_days, meter_id,
			pricing_model, at, cps, cpe, next_action_at, key, payment_id, ext, is_new, payee, paid, tx_hash, network, event_id,
			event_type, data, guess, wallet, ahead_us)
		WHERE NOT guess OR (
			(SELECT w.address FROM settlement_wallets w
				WHERE w.merchant_id = v.merchant_id AND w.mode = v.mode AND w.replaced_at IS NULL) IS NOT DISTINCT FROM v.wallet
			AND (SELECT c.ahead_us FROM test_clocks c WHERE c.merchant_id = v.merchant_id) IS NOT DISTINCT FROM v.ahead_us)
	), cus AS (
		INSERT INTO customers (merchant_id, mode, id, external_customer_id, created_at)
		SELECT merchant_id, mode, customer_id, ext, at FROM v WHERE is_new
		ON CONFLICT ON CONSTRAINT customers_external DO NOTHING RETURNING merchant_id, id
	), sub AS (
		INSERT INTO subscriptions (merchant_id, mode, id, plan_id, product_id, customer_id, payer, status,
			usage_type, amount, interval, interval_days, meter_id, pricing_model, anchor, period_index, current_period_start,
			current_period_end, next_action_at, authorization_key, created_at, latest_payment_id)
		SELECT merchant_id, mode, id, plan_id, product_id, customer_id, payer, 'active', usage_type, amount, interval, interval_days,
			meter_id, pricing_model, at, 0, cps, cpe, next_action_at, key, at, payment_id
		FROM v WHERE NOT is_new OR EXISTS (SELECT 1 FROM cus WHERE cus.merchant_id = v.merchant_id AND cus.id = v.customer_id)
		ON CONFLICT (merchant_id, mode, plan_id, customer_id) WHERE status IN ('trialing', 'active', 'past_due') DO NOTHING
		RETURNING ` + subscriptions.Columns + `
	), st AS (
		INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
		SELECT v.merchant_id, v.mode, v.key, 'activate', v.key, v.payer, v.payee, v.paid, 'succeeded', v.tx_hash, v.at
		FROM sub JOIN v ON v.merchant_id = sub.merchant_id AND v.id = sub.id RETURNING merchant_id, key
	), pay AS (
		INSERT INTO payments (merchant_id, mode, id, subscription_id, customer_id, amount, payer, payee, network, tx_hash, status,
			confirmed_at, period_start, period_end, settlement_key, created_at)
		SELECT v.merchant_id, v.mode, v.payment_id, v.id, v.customer_id, v.paid, v.payer, v.payee, v.network, v.tx_hash, 'succeeded',
			v.at, v.cps, v.cpe, v.key, v.at
		FROM st JOIN v ON v.merchant_id = st.merchant_id AND v.key = st.key WHERE v.payment_id IS NOT NULL RETURNING 1
	), ev AS (
		INSERT INTO events (merchant_id, mode, id, type, data, occurred_at)
		SELECT v.merchant_id, v.mode, v.event_id, v.event_type, v.data, v.at
		FROM sub JOIN v ON v.merchant_id = sub.merchant_id AND v.id = sub.id RETURNING merchant_id, mode, id, type
	), ` + events.DeliveriesCTE + `
	SELECT sub.*, (SELECT count(*) FROM d) AS deliveries FROM sub`

// writeActivations writes calls with subscribeBatchSQL and sets their
// outcomes; an error when the statement failed (nothing written).
func writeActivations(ctx context.Context, db *store.DB, calls []*batch.Call[activationWrite, activationResult]) error {
	n := len(calls)
	text := func() []*string { return make([]*string, n) }
	merchants, modes, ids, planIDs, products, custs, payers, usage := text(), text(), text(), text(), text(), text(), text(), text()
	amounts, intervals, days, meters, pricing, ats, cps, cpe := text(), text(), text(), text(), text(), text(), text(), text()
	next, keys, payIDs, exts, payees, paid, hashes, networks := text(), text(), text(), text(), text(), text(), text(), text()
	eventIDs, eventTypes, datas, wallets := text(), text(), text(), text()
	isNew, guess, ahead := make(pq.BoolArray, n), make(pq.BoolArray, n), make([]*int64, n)
	for i, c := range calls {
		w := c.In
		x, st := w.x, w.st
		mode, amount, settled := string(x.Mode), x.Amount.String(), st.Amount.String()
		merchants[i], modes[i], ids[i], planIDs[i], products[i], custs[i], payers[i], usage[i] = &x.MerchantID, &mode, &x.ID,
			&x.PlanID, x.ProductID, x.CustomerID, x.Payer, x.UsageType
		amounts[i], intervals[i], meters[i], pricing[i] = &amount, x.Interval, x.MeterID, nullJSON(x.PricingModel)
		if x.IntervalDays != nil {
			d := strconv.Itoa(*x.IntervalDays)
			days[i] = &d
		}
		ats[i], cps[i], cpe[i], next[i] = stamp(x.CreatedAt), stamp(*x.CurrentPeriodStart), stamp(*x.CurrentPeriodEnd), stamp(*x.NextActionAt)
		keys[i], payIDs[i], exts[i], isNew[i], payees[i], paid[i] = &st.Key, x.LatestPaymentID, &calls[i].In.ext, w.isNew, &st.Payee, &settled
		hashes[i], networks[i], eventIDs[i], datas[i] = &st.TxHash, &st.Network, &calls[i].In.eventID, &calls[i].In.data
		typ := events.SubscriptionActive
		eventTypes[i], guess[i], wallets[i], ahead[i] = &typ, w.guess, w.wallet, w.aheadUS
	}
	arr := func(a []*string) any { return store.NullTexts(a) }
	var out []struct {
		subscriptions.Subscription
		Deliveries int `db:"deliveries"`
	}
	err := db.SelectContext(ctx, &out, subscribeBatchSQL, arr(merchants), arr(modes), arr(ids), arr(planIDs), arr(products), arr(custs),
		arr(payers), arr(usage), arr(amounts), arr(intervals), arr(days), arr(meters), arr(pricing), arr(ats), arr(cps), arr(cpe),
		arr(next), arr(keys), arr(payIDs), arr(exts), isNew, arr(payees), arr(paid), arr(hashes), arr(networks), arr(eventIDs),
		arr(eventTypes), arr(datas), guess, arr(wallets), pq.GenericArray{A: ahead})
	if err != nil {
		return err
	}
	byID := make(map[string]subscriptions.Subscription, len(out))
	for _, o := range out {
		byID[o.ID] = o.Subscription
	}
	for _, c := range calls {
		sub, ok := byID[c.In.x.ID]
		c.Out = activationResult{sub: sub, ok: ok, deliveries: ok && len(out) > 0 && out[0].Deliveries > 0}
	}
	return nil
}

func stamp(t time.Time) *string {
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func nullJSON(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// planCache keeps the plans checked out (plans are create-only) with their
// merchant's terms as last read, so a checkout of a known plan by a new
// customer reads nothing: its write checks the terms and the customer
// (subscribeBatchSQL) and, when they were stale, the checkout reads and
// writes again, which refreshes them.
type planCache struct {
	mu    sync.Mutex
	plans map[string]planTerms
}

// maxCachedPlans bounds the cache; past it, it starts again empty.
const maxCachedPlans = 4096

func (c *planCache) get(planID string) (planTerms, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.plans[planID]
	return t, ok
}

// put keeps the plan and its terms from t, not the customer's.
func (c *planCache) put(t planTerms) {
	t.CustomerID, t.ActivationIndex = nil, 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.plans) >= maxCachedPlans {
		c.plans = map[string]planTerms{}
	}
	c.plans[t.ID] = t
}

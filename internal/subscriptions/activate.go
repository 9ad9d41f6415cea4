package subscriptions

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
)

// A checkout's activation is written by one statement for any number of
// activations (activationsSQL): the customer if new, the subscription, the
// activation's settlement when the rail only decided it, the first
// payment, subscription.active and its deliveries. A checkout the test rail
// settles without a transaction writes it in a group commit with the
// checkouts that arrived meanwhile (Activations: on this machine's disks a
// commit's flush is milliseconds, and a checkout under load spent most of
// its time waiting for WALWrite); alone, it is a batch of one. Every other
// activation (a trial, a coupon, a plan granting features, a live rail's)
// is a batch of one of the same statement in its checkout's transaction
// (ActivateTx), which then grants the plan's features.

// Activation is a checkout's activation to write, everything decided.
type Activation struct {
	// Sub is the subscription and First its first payment, as
	// NewActivation makes them.
	Sub   Subscription
	First *payments.Payment
	// Settlement is the rail's succeeded activation.
	Settlement rail.Settlement
	// Settle: a Deciding rail decided Settlement without storing it; it
	// is stored with the subscription, and one already in the ledger
	// fails the statement. Else the ledger has it already.
	Settle bool
	// NewCustomer: Sub's customer is created, with External as its
	// external id; when another has that id by then, nothing is written.
	NewCustomer bool
	External    string
	// Guess: the merchant's wallet on file and test clock offset were
	// not read but taken to be Wallet and AheadUS (a cached plan's); when
	// they are no longer, nothing is written.
	Guess   bool
	Wallet  *string
	AheadUS *int64
	// data is subscription.active's data: Sub's wire form, made by the
	// caller's goroutine rather than by a batch's leader for all.
	data string
}

// PrepareActivation is the Activation of a checkout whose activation the
// rail settled or decided (in.Activation): the subscription and its first
// payment as NewActivation makes them.
func PrepareActivation(in ActivateInput) (Activation, error) {
	x, first := NewActivation(in)
	return activation(x, first, in.Activation)
}

func activation(x Subscription, first *payments.Payment, st rail.Settlement) (Activation, error) {
	data, err := json.Marshal(x.Wire())
	return Activation{Sub: x, First: first, Settlement: st, data: string(data)}, err
}

// Activated is an Activation's outcome: OK=false when nothing was written
// (the customer had a live subscription to the plan, or was created by
// another checkout first, or the guess was wrong: the caller is to decide
// again), Err when the write failed otherwise.
type Activated struct {
	Sub        Subscription
	OK         bool
	Deliveries bool
	Err        error
}

// Activations group-commits activations: concurrent Writes share one
// statement.
type Activations struct {
	g *batch.Group[Activation, Activated]
}

// NewActivations returns the activations' group commit of db.
func NewActivations(db *store.DB) *Activations {
	return &Activations{g: batch.New(func(calls []*batch.Call[Activation, Activated]) { RunActivations(db, calls) }, 0, 0)}
}

// Write writes a, in a batch with the activations written meanwhile.
func (w *Activations) Write(a Activation) Activated { return w.g.Do(a) }

// batchTimeout bounds a batch's statement: it runs for several requests,
// so no one request's context cancels it.
const batchTimeout = 30 * time.Second

// RunActivations writes a batch of activations (WriteActivations). A batch
// whose statement fails (one settlement already in the ledger fails them
// all) is written one by one.
func RunActivations(db *store.DB, calls []*batch.Call[Activation, Activated]) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	batch.OneByOne(calls, func(calls []*batch.Call[Activation, Activated]) error {
		return WriteActivations(ctx, db, calls)
	}, func(err error) Activated {
		// A settlement or payment already in the ledger (or a deadlock
		// with another batch) leaves the checkout to its locked path;
		// anything else is an error.
		if store.UniqueViolation(err, "") || store.Retryable(err) {
			return Activated{}
		}
		return Activated{Err: store.Translate(err)}
	})
	for _, c := range calls {
		if c.Out.Deliveries {
			db.Notify(events.DeliveryChannel)
			return
		}
	}
}

// WriteActivations writes calls in one statement and sets their outcomes;
// an error when the statement failed (nothing written).
func WriteActivations(ctx context.Context, db *store.DB, calls []*batch.Call[Activation, Activated]) error {
	as := make([]Activation, len(calls))
	for i, c := range calls {
		as[i] = c.In
	}
	written, deliveries, err := writeActivations(ctx, db, as)
	if err != nil {
		return err
	}
	for _, c := range calls {
		x, ok := written[c.In.Sub.ID]
		c.Out = Activated{Sub: x, OK: ok, Deliveries: ok && deliveries}
	}
	return nil
}

// ActivateTx creates the subscription of a checkout in tx, a batch of one
// of the activations' statement: its first period starts now; a licensed
// plan's first charge is recorded as its payment; subscription.active is
// emitted; then the plan's features are granted. A trial (in.Trial)
// starts trialing instead, with no payment (see startTrial). The settlement
// is in the rail's ledger already. The same activation recorded twice
// returns the first subscription (replayed=true). Fails with
// already_subscribed when the customer has another live subscription to
// the plan.
func ActivateTx(ctx context.Context, tx *store.Tx, in ActivateInput) (x Subscription, replayed bool, err error) {
	p := in.Plan
	s := p.Scope()
	now := in.Now.Truncate(time.Microsecond)
	x, first := NewActivation(in)
	if first != nil {
		// A payment recorded for this settlement by an earlier attempt is
		// the subscription's first one.
		paid, ok, err := payments.BySettlement(ctx, tx, s, in.Activation.Key)
		if err != nil {
			return Subscription{}, false, err
		}
		if ok {
			first, x.LatestPaymentID = nil, &paid.ID
		}
	}
	a, err := activation(x, first, in.Activation)
	if err != nil {
		return Subscription{}, false, err
	}
	written, deliveries, err := writeActivations(ctx, tx, []Activation{a})
	if err != nil {
		return Subscription{}, false, store.Translate(err)
	}
	if deliveries {
		tx.Notify(events.DeliveryChannel)
	}
	var ok bool
	if x, ok = written[x.ID]; !ok {
		live, found, err := LiveFor(ctx, tx, p, in.CustomerID)
		if err != nil {
			return Subscription{}, false, err
		}
		if found && live.AuthorizationKey != nil && *live.AuthorizationKey == in.Activation.Key {
			return live, true, nil
		}
		return Subscription{}, false, apperr.New(apperr.AlreadySubscribed, "customer %s already has a live subscription to %s", in.CustomerID, p.ID)
	}
	if err := noticeAtStart(ctx, tx, x, now); err != nil {
		return Subscription{}, false, err
	}
	for _, f := range p.Features() {
		cust := in.CustomerID
		if _, err := entitlements.GrantTx(ctx, tx, s, entitlements.GrantInput{FeatureKey: f.Key, Customer: customers.Ref{ID: &cust},
			Limit: f.Limit, StartsAt: &now, Source: entitlements.SourcePlan, SubscriptionID: &x.ID}, now); err != nil {
			return Subscription{}, false, err
		}
	}
	return x, false, nil
}

// activationsSQL is the statement writing activations, one array element
// an activation of any merchant and plan. A new customer is created; the
// subscription is inserted only if its customer was found by the caller's
// read or created here (not by another activation of the batch or another
// transaction first), and only if the customer has no live subscription to
// the plan (subscriptions_live; another activation of the batch may have
// made it); its settlement (when the rail only decided it), payment (a
// licensed plan's: payment_id not null) and event are written only with
// it. A guessed activation is written only if its merchant's wallet and
// test clock are still those it was decided with; with a new customer, as
// guessed, no other activation can have the customer's activation index.
// The settlement and the payment are plain inserts: one already in the
// ledger fails the whole statement.
func activationsSQL() string {
	return `WITH v AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::numeric[], $10::text[], $11::integer[], $12::text[], $13::jsonb[], $14::timestamptz[], $15::timestamptz[],
			$16::timestamptz[], $17::timestamptz[], $18::text[], $19::text[], $20::text[], $21::boolean[], $22::text[],
			$23::numeric[], $24::text[], $25::text[], $26::text[], $27::jsonb[], $28::boolean[], $29::text[], $30::bigint[],
			$31::text[], $32::timestamptz[], $33::jsonb[], $34::boolean[], $35::jsonb[])
		AS v(merchant_id, mode, id, plan_id, product_id, customer_id, payer, usage_type, amount, interval, interval_days, meter_id,
			pricing_model, at, cps, cpe, next_action_at, key, payment_id, ext, is_new, payee, paid, tx_hash, network, event_id,
			data, guess, wallet, ahead_us, status, trial_end, discount, settle, lines)
		WHERE NOT guess OR (
			(SELECT w.address FROM settlement_wallets w
				WHERE w.merchant_id = v.merchant_id AND w.mode = v.mode AND w.replaced_at IS NULL) IS NOT DISTINCT FROM v.wallet
			AND (SELECT c.ahead_us FROM test_clocks c WHERE c.merchant_id = v.merchant_id) IS NOT DISTINCT FROM v.ahead_us)
	), ` + customers.CreateCTE("cus", `SELECT merchant_id, mode, customer_id AS id, ext AS external_customer_id, at FROM v WHERE is_new`) + `,
	sub AS (
		INSERT INTO subscriptions (merchant_id, mode, id, plan_id, product_id, customer_id, payer, status,
			usage_type, amount, interval, interval_days, meter_id, pricing_model, anchor, period_index, current_period_start,
			current_period_end, next_action_at, authorization_key, created_at, latest_payment_id, trial_end, discount)
		SELECT merchant_id, mode, id, plan_id, product_id, customer_id, payer, status, usage_type, amount, interval, interval_days,
			meter_id, pricing_model, coalesce(trial_end, at) /* a trial's periods are anchored on its end */, 0, cps, cpe, next_action_at, key, at, payment_id, trial_end, discount
		FROM v WHERE NOT is_new OR EXISTS (SELECT 1 FROM cus WHERE cus.merchant_id = v.merchant_id AND cus.id = v.customer_id)
		ON CONFLICT (merchant_id, mode, plan_id, customer_id) WHERE status IN ('trialing', 'active', 'past_due') DO NOTHING
		RETURNING ` + columns + `
	), ` + rail.DecidedCTE("st", `SELECT v.merchant_id, v.mode, v.key, 'activate' AS kind, v.key AS nonce, v.payer, v.payee,
			v.paid AS amount, v.tx_hash, v.at
		FROM sub JOIN v ON v.merchant_id = sub.merchant_id AND v.id = sub.id WHERE v.settle`) + `,
	` + payments.InsertCTE("pay", `SELECT v.merchant_id, v.mode, v.payment_id AS id, NULL::text AS invoice_id,
			v.id AS subscription_id, v.customer_id, v.paid AS amount, v.payer, v.payee, v.network, v.tx_hash, v.at,
			v.cps AS period_start, v.cpe AS period_end, v.lines, v.key AS settlement_key
		FROM sub JOIN v ON v.merchant_id = sub.merchant_id AND v.id = sub.id WHERE v.payment_id IS NOT NULL`) + `,
	` + events.InsertCTE(`SELECT v.merchant_id, v.mode, v.event_id AS id, '`+events.SubscriptionActive+`' AS type, v.data, v.at
		FROM sub JOIN v ON v.merchant_id = sub.merchant_id AND v.id = sub.id`) + `
	SELECT sub.*, (SELECT count(*) FROM d) AS deliveries FROM sub`
}

// writeActivations runs activationsSQL over as and returns the
// subscriptions written by id, and whether any webhook delivery was made.
func writeActivations(ctx context.Context, q store.Querier, as []Activation) (map[string]Subscription, bool, error) {
	n := len(as)
	text := func() []*string { return make([]*string, n) }
	merchants, modes, ids, planIDs, products, custs, payers, usage := text(), text(), text(), text(), text(), text(), text(), text()
	amounts, intervals, days, meters, pricing, ats, cps, cpe := text(), text(), text(), text(), text(), text(), text(), text()
	next, keys, payIDs, exts, payees, paid, hashes, networks := text(), text(), text(), text(), text(), text(), text(), text()
	eventIDs, datas, wallets, statuses, trialEnds, discounts, lines := text(), text(), text(), text(), text(), text(), text()
	isNew, guess, settle, ahead := make(pq.BoolArray, n), make(pq.BoolArray, n), make(pq.BoolArray, n), make([]*int64, n)
	for i := range as {
		a := &as[i]
		x, st := &a.Sub, &a.Settlement
		mode, amount, settled, evt := string(x.Mode), x.Amount.String(), st.Amount.String(), id.New("evt")
		merchants[i], modes[i], ids[i], planIDs[i], products[i], custs[i], payers[i], usage[i] = &x.MerchantID, &mode, &x.ID,
			&x.PlanID, x.ProductID, x.CustomerID, x.Payer, x.UsageType
		amounts[i], intervals[i], meters[i], pricing[i] = &amount, x.Interval, x.MeterID, nullJSON(x.PricingModel)
		if x.IntervalDays != nil {
			d := strconv.Itoa(*x.IntervalDays)
			days[i] = &d
		}
		ats[i], cps[i], cpe[i], next[i] = optTime(&x.CreatedAt), optTime(x.CurrentPeriodStart), optTime(x.CurrentPeriodEnd), optTime(x.NextActionAt)
		keys[i], exts[i], isNew[i], payees[i], paid[i] = &st.Key, &a.External, a.NewCustomer, &st.Payee, &settled
		hashes[i], networks[i], eventIDs[i], datas[i] = &st.TxHash, &st.Network, &evt, &a.data
		guess[i], wallets[i], ahead[i], settle[i] = a.Guess, a.Wallet, a.AheadUS, a.Settle
		statuses[i], trialEnds[i], discounts[i] = &x.Status, optTime(x.TrialEnd), nullJSON(x.DiscountJSON)
		if a.First != nil {
			payIDs[i], lines[i] = &a.First.ID, nullJSON(a.First.Lines)
		}
	}
	arr := func(a []*string) any { return store.NullTexts(a) }
	var out []struct {
		Subscription
		Deliveries int `db:"deliveries"`
	}
	err := q.SelectContext(ctx, &out, activationsSQL(), arr(merchants), arr(modes), arr(ids), arr(planIDs), arr(products), arr(custs),
		arr(payers), arr(usage), arr(amounts), arr(intervals), arr(days), arr(meters), arr(pricing), arr(ats), arr(cps), arr(cpe),
		arr(next), arr(keys), arr(payIDs), arr(exts), isNew, arr(payees), arr(paid), arr(hashes), arr(networks), arr(eventIDs),
		arr(datas), guess, arr(wallets), pq.GenericArray{A: ahead}, arr(statuses), arr(trialEnds), arr(discounts), settle, arr(lines))
	if err != nil {
		return nil, false, err
	}
	written := make(map[string]Subscription, len(out))
	for _, o := range out {
		written[o.ID] = o.Subscription
	}
	return written, len(out) > 0 && out[0].Deliveries > 0, nil
}

package alerts

import (
	"context"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/pricing"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// CreditSubject is the alert_checks subject of a credit balance change.
const CreditSubject = "credits"

// Evaluator is the alert job: it claims checks (FOR UPDATE SKIP LOCKED, so
// any number of replicas share them) and fires the alerts they cross. Run
// it every second or so rather than at each check: the rows a busy
// customer's batches leave meanwhile make one evaluation.
type Evaluator struct {
	DB *store.DB
	// Batch bounds the checks one transaction claims.
	Batch int
}

type check struct {
	MerchantID  string      `db:"merchant_id"`
	Mode        tenant.Mode `db:"mode"`
	CustomerID  string      `db:"customer_id"`
	Subject     string      `db:"subject"`
	ID          string      `db:"id"`
	PrevBalance *string     `db:"prev_balance"`
}

// Step finds the merchants with check rows waiting, by a read that locks
// nothing, and evaluates each merchant's (claimBatch): a row lock never
// spans merchants. more is true when a merchant's batch was full.
func (e *Evaluator) Step(ctx context.Context, wall time.Time) (more bool, err error) {
	batch := e.Batch
	if batch <= 0 {
		batch = 2000
	}
	var merchants []string
	if err := e.DB.SelectContext(ctx, &merchants, `SELECT DISTINCT merchant_id FROM (SELECT merchant_id FROM alert_checks LIMIT $1) c`, batch); err != nil {
		return false, store.Translate(err)
	}
	for _, m := range merchants {
		full, err := e.claimBatch(ctx, m, batch, wall)
		if err != nil {
			return false, err
		}
		more = more || full
	}
	return more, nil
}

// claimBatch claims a batch of one merchant's check rows and evaluates
// them, in one transaction: the rows and the firings they cause commit
// together, and a crash before the commit leaves the rows for the next
// run. Each customer and subject is evaluated once however many rows it
// has. full is true when the batch was.
func (e *Evaluator) claimBatch(ctx context.Context, merchantID string, batch int, wall time.Time) (full bool, err error) {
	n := 0
	err = e.DB.InTx(ctx, func(tx *store.Tx) error {
		var rows []check
		err := tx.SelectContext(ctx, &rows, `DELETE FROM alert_checks WHERE merchant_id = $1 AND id IN (
				SELECT id FROM alert_checks WHERE merchant_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
			RETURNING merchant_id, mode, customer_id, subject, id, prev_balance::text AS prev_balance`, merchantID, batch)
		if err != nil {
			return store.Translate(err)
		}
		n = len(rows)
		for _, c := range coalesce(rows) {
			if err := evaluate(ctx, tx, c, wall); err != nil {
				return err
			}
		}
		return nil
	})
	return n == batch, err
}

// coalesce keeps one check per scope, customer and subject, in a fixed
// order (so concurrent jobs lock accounts in the same order); a credit
// check keeps the highest balance before a debit, the one a drop below a
// threshold is measured from.
func coalesce(rows []check) []check {
	type key struct{ m, mode, cus, subject string }
	byKey := map[key]int{}
	var out []check
	for _, r := range rows {
		k := key{r.MerchantID, string(r.Mode), r.CustomerID, r.Subject}
		i, seen := byKey[k]
		if !seen {
			byKey[k] = len(out)
			out = append(out, r)
			continue
		}
		if r.PrevBalance != nil && (out[i].PrevBalance == nil || greater(*r.PrevBalance, *out[i].PrevBalance)) {
			out[i].PrevBalance = r.PrevBalance
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.MerchantID+"\x00"+string(a.Mode)+"\x00"+a.CustomerID+"\x00"+a.Subject < b.MerchantID+"\x00"+string(b.Mode)+"\x00"+b.CustomerID+"\x00"+b.Subject
	})
	return out
}

func greater(a, b string) bool {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x != nil && y != nil && x.Cmp(y) > 0
}

// evaluate fires what one check crosses, at the merchant's clock.
func evaluate(ctx context.Context, tx *store.Tx, c check, wall time.Time) error {
	s := tenant.Scope{MerchantID: c.MerchantID, Mode: c.Mode}
	now := wall
	if s.Mode == tenant.Test {
		ahead, err := testclock.Ahead(ctx, tx, s.MerchantID)
		if err != nil {
			return err
		}
		now = wall.Add(ahead)
	}
	now = now.UTC().Truncate(time.Microsecond)
	if c.Subject == CreditSubject {
		return evaluateCredit(ctx, tx, s, c, now)
	}
	if err := evaluateUsage(ctx, tx, s, c, now); err != nil {
		return err
	}
	return evaluateSpend(ctx, tx, s, c, now)
}

// active returns the scope's active alerts of type typ that watch the
// customer (its own and the all-customer ones), on meterID when given.
func active(ctx context.Context, tx *store.Tx, s tenant.Scope, typ, customerID string, meterID *string) ([]Alert, error) {
	var as []Alert
	err := tx.SelectContext(ctx, &as, `SELECT `+columns+` FROM alerts
		WHERE merchant_id = $1 AND mode = $2 AND status = 'active' AND type = $3
			AND (customer_id IS NULL OR customer_id = $4) AND meter_id IS NOT DISTINCT FROM $5
		ORDER BY created_at, seq`, s.MerchantID, s.Mode, typ, customerID, meterID)
	return as, store.Translate(err)
}

func evaluateUsage(ctx context.Context, tx *store.Tx, s tenant.Scope, c check, now time.Time) error {
	as, err := active(ctx, tx, s, UsageThreshold, c.CustomerID, &c.Subject)
	if err != nil || len(as) == 0 {
		return err
	}
	m, ok, err := metering.ByID(ctx, tx, s, c.Subject)
	if err != nil || !ok {
		return err
	}
	start, end, ok, err := metering.CurrentPeriod(ctx, tx, s, c.CustomerID, m.ID)
	if err != nil {
		return err
	}
	if !ok {
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(0, 1, 0)
	}
	agg, err := metering.Aggregate(ctx, tx, s, m, c.CustomerID, start, end)
	if err != nil {
		return err
	}
	value := agg.Big(m.Aggregation)
	for _, a := range as {
		t, _ := new(big.Int).SetString(*a.Threshold, 10)
		if value.Cmp(t) < 0 {
			continue
		}
		trig := trigger(a, c.CustomerID, value.String(), now)
		trig.PeriodStart, trig.PeriodEnd = opt(start), opt(end)
		if err := fire(ctx, tx, s, a, c.CustomerID, wire.Timestamp(start), trig, now); err != nil {
			return err
		}
	}
	return nil
}

// evaluateSpend rates each of the customer's live metered subscriptions on
// the check's meter for its period so far and fires the spend alerts whose
// share of the plan's cap it reaches.
func evaluateSpend(ctx context.Context, tx *store.Tx, s tenant.Scope, c check, now time.Time) error {
	as, err := active(ctx, tx, s, SpendThreshold, c.CustomerID, nil)
	if err != nil || len(as) == 0 {
		return err
	}
	var subs []struct {
		ID      string          `db:"id"`
		Amount  string          `db:"amount"`
		Pricing json.RawMessage `db:"pricing_model"`
		Start   time.Time       `db:"current_period_start"`
		End     time.Time       `db:"current_period_end"`
		Agg     string          `db:"aggregation"`
	}
	err = tx.SelectContext(ctx, &subs, `SELECT x.id, x.amount::text AS amount, x.pricing_model, x.current_period_start, x.current_period_end, m.aggregation
		FROM subscriptions x JOIN meters m ON m.merchant_id = x.merchant_id AND m.id = x.meter_id
		WHERE x.merchant_id = $1 AND x.mode = $2 AND x.customer_id = $3 AND x.meter_id = $4 AND x.usage_type = 'metered'
			AND x.status IN ('active', 'past_due') AND x.amount IS NOT NULL AND x.pricing_model IS NOT NULL
			AND x.current_period_start IS NOT NULL AND x.current_period_end IS NOT NULL`,
		s.MerchantID, s.Mode, c.CustomerID, c.Subject)
	if err != nil {
		return store.Translate(err)
	}
	for _, x := range subs {
		model, err := pricing.Decode(x.Pricing)
		if err != nil {
			continue // a stored model the rater cannot read rates nothing either
		}
		agg, err := metering.Aggregate(ctx, tx, s, metering.Meter{ID: c.Subject, Aggregation: x.Agg}, c.CustomerID, x.Start, x.End)
		if err != nil {
			return err
		}
		rated := model.Rate(agg.Big(x.Agg)).Amount
		if rated == nil {
			rated = new(big.Int)
		}
		capAmount, _ := new(big.Int).SetString(x.Amount, 10)
		for _, a := range as {
			// rated/cap >= percent/100, in integers.
			lhs := new(big.Int).Mul(rated, big.NewInt(100))
			rhs := new(big.Int).Mul(capAmount, big.NewInt(*a.Percent))
			if lhs.Cmp(rhs) < 0 {
				continue
			}
			trig := trigger(a, c.CustomerID, rated.String(), now)
			sub := x.ID
			trig.SubscriptionID, trig.Meter = &sub, &c.Subject
			trig.PeriodStart, trig.PeriodEnd = opt(x.Start), opt(x.End)
			if err := fire(ctx, tx, s, a, x.ID, wire.Timestamp(x.Start), trig, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// evaluateCredit fires the balance alerts whose threshold the customer's
// balance dropped below: it was at least the threshold before a debit (the
// check's balance), or when last evaluated, and is below it now. The
// customer's credit account is locked first, so debits and other jobs
// wait, and the state kept per alert and customer makes each drop fire
// once.
func evaluateCredit(ctx context.Context, tx *store.Tx, s tenant.Scope, c check, now time.Time) error {
	as, err := active(ctx, tx, s, CreditBalanceBelow, c.CustomerID, nil)
	if err != nil || len(as) == 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM credit_accounts WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 FOR UPDATE`,
		s.MerchantID, s.Mode, c.CustomerID); err != nil {
		return store.Translate(err)
	}
	b, err := credits.GetBalance(ctx, tx, s, c.CustomerID, now)
	if err != nil {
		return err
	}
	cur := big.NewInt(int64(b.Balance))
	var prev *big.Int
	if c.PrevBalance != nil {
		prev, _ = new(big.Int).SetString(*c.PrevBalance, 10)
	}
	for _, a := range as {
		t, _ := new(big.Int).SetString(*a.Threshold, 10)
		var st []struct {
			Below     bool  `db:"below"`
			Crossings int64 `db:"crossings"`
		}
		if err := tx.SelectContext(ctx, &st, `SELECT below, crossings FROM alert_balance_states WHERE merchant_id = $1 AND alert_id = $2 AND customer_id = $3`,
			s.MerchantID, a.ID, c.CustomerID); err != nil {
			return store.Translate(err)
		}
		wasAbove := (prev != nil && prev.Cmp(t) >= 0) || (len(st) == 1 && !st[0].Below)
		below := cur.Cmp(t) < 0
		var crossings int64
		if len(st) == 1 {
			crossings = st[0].Crossings
		}
		if wasAbove && below {
			crossings++
			if err := fire(ctx, tx, s, a, c.CustomerID, "crossing "+strconv.FormatInt(crossings, 10), trigger(a, c.CustomerID, cur.String(), now), now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_balance_states (merchant_id, alert_id, customer_id, below, crossings) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (merchant_id, alert_id, customer_id) DO UPDATE SET below = EXCLUDED.below, crossings = EXCLUDED.crossings`,
			s.MerchantID, a.ID, c.CustomerID, below, crossings); err != nil {
			return store.Translate(err)
		}
	}
	return nil
}

func trigger(a Alert, customerID, value string, now time.Time) wire.AlertTrigger {
	cust := customerID
	return wire.AlertTrigger{Object: "alert_trigger", AlertID: a.ID, Type: a.Type, CustomerID: &cust, Meter: a.MeterID,
		Threshold: a.Threshold, Percent: a.Percent, Value: value, TriggeredAt: wire.Timestamp(now)}
}

func opt(t time.Time) *string { s := wire.Timestamp(t); return &s }

// fire records the firing of a for subject in the period (or crossing)
// periodKey and emits alert.triggered, unless it fired already: the firing
// row's key decides, whatever the concurrency.
func fire(ctx context.Context, tx *store.Tx, s tenant.Scope, a Alert, subject, periodKey string, trig wire.AlertTrigger, now time.Time) error {
	var fresh []string
	err := tx.SelectContext(ctx, &fresh, `INSERT INTO alert_firings (merchant_id, mode, alert_id, subject, period_key, event_id)
		VALUES ($1, $2, $3, $4, $5, '') ON CONFLICT DO NOTHING RETURNING alert_id`, s.MerchantID, s.Mode, a.ID, subject, periodKey)
	if err != nil || len(fresh) == 0 {
		return store.Translate(err)
	}
	ev, err := events.Emit(ctx, tx, s, events.AlertTriggered, now, trig)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE alert_firings SET event_id = $5 WHERE merchant_id = $1 AND alert_id = $2 AND subject = $3 AND period_key = $4`,
		s.MerchantID, a.ID, subject, periodKey, ev.ID)
	return store.Translate(err)
}

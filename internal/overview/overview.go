// Package overview answers the merchant dashboard's first page: revenue per
// day for 30 days, active subscriptions, monthly recurring revenue, failed
// charges and renewals due. Each figure is one statement that reads only
// the rows it counts through an index (the last 30 days' payments, the
// live subscriptions, the failed-charge events), never all of a merchant's
// payments.
package overview

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Days is the revenue chart's span, and the window failed charges are
// counted over.
const Days = 30

// RenewalWindow is how far ahead renewals count as due.
const RenewalWindow = 7 * 24 * time.Hour

// Day is one day's revenue (UTC).
type Day struct {
	Date    time.Time
	Revenue money.Amount
}

// Overview is the figures of one merchant in one mode at a time.
type Overview struct {
	Revenue []Day // Days days, oldest first, ending with today
	// Total is the Days days' revenue.
	Total money.Amount
	// Active subscriptions; PastDue ones are retrying a failed charge.
	Active, PastDue int
	// MRR is the active licensed subscriptions' amounts per month, in base
	// units (a year's is a twelfth, a week's 52/12); metered charges vary and
	// are left out.
	MRR money.Amount
	// FailedCharges is subscription charges that failed within Days days.
	FailedCharges int
	// RenewalsDue is active subscriptions renewing within RenewalWindow,
	// not set to cancel.
	RenewalsDue int
}

// revenueSQL sums the payments of the window per UTC day: a range of the
// payments_list index, never the merchant's older payments.
const revenueSQL = `SELECT (created_at AT TIME ZONE 'UTC')::date AS day, sum(amount) AS revenue
	FROM payments WHERE merchant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4
	GROUP BY 1`

// subscriptionsSQL reads the live subscriptions only (the partial index
// subscriptions_live holds just those), grouped by what their figures
// depend on: the database only counts and sums each row, and the few
// groups' monthly amounts are worked out in Go (per-row arithmetic on
// numeric amounts cost the statement most of its time).
const subscriptionsSQL = `SELECT status, interval, interval_days, usage_type, count(*) AS n, sum(amount) AS amount,
		count(*) FILTER (WHERE cancel_at IS NULL AND current_period_end < $3) AS renewals_due
	FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND status IN ('active', 'past_due')
	GROUP BY status, interval, interval_days, usage_type`

// subscriptionGroup is one row of subscriptionsSQL.
type subscriptionGroup struct {
	Status       string `db:"status"`
	Interval     string `db:"interval"`
	IntervalDays *int64 `db:"interval_days"`
	UsageType    string `db:"usage_type"`
	N            int    `db:"n"`
	AmountText   string `db:"amount"`
	RenewalsDue  int    `db:"renewals_due"`
}

// perMonth is the factor turning an amount per interval into one per
// month: a year's is a twelfth, a week's 52/12, a custom interval's
// 365/(12 × its days). A custom interval without days counts nothing.
func perMonth(interval string, days *int64) *big.Rat {
	switch interval {
	case "year":
		return big.NewRat(1, 12)
	case "week":
		return big.NewRat(52, 12)
	case "biweekly":
		return big.NewRat(26, 12)
	case "custom":
		if days == nil || *days <= 0 {
			return new(big.Rat)
		}
		return big.NewRat(365, 12**days)
	}
	return big.NewRat(1, 1)
}

// addSubscriptions adds the live subscriptions' groups to o.
func (o *Overview) addSubscriptions(groups []subscriptionGroup) error {
	mrr := new(big.Rat)
	for _, g := range groups {
		if g.Status != "active" {
			o.PastDue += g.N
			continue
		}
		o.Active += g.N
		o.RenewalsDue += g.RenewalsDue
		if g.UsageType != "licensed" {
			continue
		}
		sum, ok := new(big.Int).SetString(g.AmountText, 10)
		if !ok {
			return fmt.Errorf("overview: subscription amounts sum to %q", g.AmountText)
		}
		mrr.Add(mrr, new(big.Rat).Mul(new(big.Rat).SetInt(sum), perMonth(g.Interval, g.IntervalDays)))
	}
	floor := new(big.Int).Quo(mrr.Num(), mrr.Denom())
	if !floor.IsInt64() {
		return fmt.Errorf("overview: monthly recurring revenue %s out of range", floor)
	}
	o.MRR = money.Amount(floor.Int64())
	return nil
}

// failedSQL counts failed charges by the time events show (the test clock
// in test mode), through the partial index events_payment_failed.
const failedSQL = `SELECT count(*) FROM events
	WHERE merchant_id = $1 AND mode = $2 AND type = 'subscription.payment_failed' AND occurred_at >= $3`

// Get returns s's overview at now (the merchant's test-clock time in test
// mode).
func Get(ctx context.Context, q store.Querier, s tenant.Scope, now time.Time) (Overview, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -(Days - 1))
	var o Overview
	var rows []struct {
		Day     time.Time    `db:"day"`
		Revenue money.Amount `db:"revenue"`
	}
	if err := q.SelectContext(ctx, &rows, revenueSQL, s.MerchantID, s.Mode, from, today.AddDate(0, 0, 1)); err != nil {
		return o, store.Translate(err)
	}
	byDay := map[time.Time]money.Amount{}
	for _, r := range rows {
		byDay[r.Day.UTC()] = r.Revenue
	}
	for d := from; !d.After(today); d = d.AddDate(0, 0, 1) {
		o.Revenue = append(o.Revenue, Day{Date: d, Revenue: byDay[d]})
		total, err := money.Add(o.Total, byDay[d])
		if err != nil {
			return o, err
		}
		o.Total = total
	}
	var groups []subscriptionGroup
	if err := q.SelectContext(ctx, &groups, subscriptionsSQL, s.MerchantID, s.Mode, now.Add(RenewalWindow)); err != nil {
		return o, store.Translate(err)
	}
	if err := o.addSubscriptions(groups); err != nil {
		return o, err
	}
	if err := q.GetContext(ctx, &o.FailedCharges, failedSQL, s.MerchantID, s.Mode, now.AddDate(0, 0, -Days)); err != nil {
		return o, store.Translate(err)
	}
	return o, nil
}

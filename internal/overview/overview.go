// Package overview answers the merchant dashboard's first page: revenue per
// day for 30 days, active subscriptions, monthly recurring revenue, failed
// charges and renewals due. Each figure is one statement that reads only
// the rows it counts through an index (the last 30 days' payments, the
// live subscriptions, the failed-charge events), never all of a merchant's
// payments.
package overview

import (
	"context"
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
// subscriptions_live holds just those).
const subscriptionsSQL = `SELECT
		count(*) FILTER (WHERE status = 'active') AS active,
		count(*) FILTER (WHERE status = 'past_due') AS past_due,
		coalesce(floor(sum(amount * CASE interval WHEN 'week' THEN 52 WHEN 'biweekly' THEN 26 WHEN 'custom' THEN 365 ELSE 1 END
			/ CASE interval WHEN 'year' THEN 12 WHEN 'week' THEN 12 WHEN 'biweekly' THEN 12 WHEN 'custom' THEN 12 * interval_days ELSE 1 END)
			FILTER (WHERE status = 'active' AND usage_type = 'licensed')), 0)::bigint AS mrr,
		count(*) FILTER (WHERE status = 'active' AND cancel_at IS NULL AND current_period_end < $3) AS renewals_due
	FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND status IN ('active', 'past_due')`

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
	var subs struct {
		Active      int          `db:"active"`
		PastDue     int          `db:"past_due"`
		MRR         money.Amount `db:"mrr"`
		RenewalsDue int          `db:"renewals_due"`
	}
	if err := q.GetContext(ctx, &subs, subscriptionsSQL, s.MerchantID, s.Mode, now.Add(RenewalWindow)); err != nil {
		return o, store.Translate(err)
	}
	o.Active, o.PastDue, o.MRR, o.RenewalsDue = subs.Active, subs.PastDue, subs.MRR, subs.RenewalsDue
	if err := q.GetContext(ctx, &o.FailedCharges, failedSQL, s.MerchantID, s.Mode, now.AddDate(0, 0, -Days)); err != nil {
		return o, store.Translate(err)
	}
	return o, nil
}

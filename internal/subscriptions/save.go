package subscriptions

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
)

// saveSQL writes the mutable state of many subscriptions in one statement
// (the rows are locked by the caller's claim) and returns them as stored.
const saveSQL = `UPDATE subscriptions s SET status = v.status, period_index = v.period_index,
		current_period_start = v.cps, current_period_end = v.cpe, cancel_at = v.cancel_at, ended_at = v.ended_at,
		latest_payment_id = v.latest_payment_id, next_action_at = v.next_action_at, failed_at = v.failed_at, retries = v.retries,
		outstanding_amount = v.oa, outstanding_lines = v.ol, outstanding_start = v.os, outstanding_end = v.oe, discount = v.discount
	FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[],
		$9::text[], $10::timestamptz[], $11::timestamptz[], $12::int[], $13::numeric[], $14::jsonb[], $15::timestamptz[], $16::timestamptz[],
		$17::jsonb[])
		AS v(merchant_id, id, status, period_index, cps, cpe, cancel_at, ended_at, latest_payment_id, next_action_at, failed_at, retries, oa, ol, os, oe,
			discount)
	WHERE s.merchant_id = v.merchant_id AND s.id = v.id
	RETURNING ` + qualifiedColumns

// saveMany stores each action's state after its outcome and returns the
// stored subscriptions by id.
func saveMany(ctx context.Context, tx *store.Tx, actions []*action) (map[string]Subscription, error) {
	xs := make([]Subscription, len(actions))
	for i, a := range actions {
		xs[i] = a.after
	}
	saved, err := save(ctx, tx, xs...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Subscription, len(saved))
	for _, x := range saved {
		out[x.ID] = x
	}
	return out, nil
}

// save stores the mutable state of subscriptions locked in tx.
func save(ctx context.Context, tx *store.Tx, xs ...Subscription) ([]Subscription, error) {
	n := len(xs)
	merchants, ids, statuses := make([]string, n), make([]string, n), make([]string, n)
	idx, retries := make([]int64, n), make([]int64, n)
	cps, cpe, cancel, ended, next, failed, os, oe := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n),
		make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	latest, oa, ol, disc := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	for i, x := range xs {
		merchants[i], ids[i], statuses[i], idx[i], retries[i] = x.MerchantID, x.ID, x.Status, int64(x.PeriodIndex), int64(x.Retries)
		cps[i], cpe[i], cancel[i], ended[i] = optTime(x.CurrentPeriodStart), optTime(x.CurrentPeriodEnd), optTime(x.CancelAt), optTime(x.EndedAt)
		next[i], failed[i], os[i], oe[i] = optTime(x.NextActionAt), optTime(x.FailedAt), optTime(x.OutstandingStart), optTime(x.OutstandingEnd)
		latest[i], ol[i], disc[i] = x.LatestPaymentID, nullJSON(x.OutstandingLines), nullJSON(x.DiscountJSON)
		if x.OutstandingAmount != nil {
			a := x.OutstandingAmount.String()
			oa[i] = &a
		}
	}
	var out []Subscription
	err := tx.SelectContext(ctx, &out, saveSQL, pq.StringArray(merchants), pq.StringArray(ids), pq.StringArray(statuses), pq.Int64Array(idx),
		store.NullTexts(cps), store.NullTexts(cpe), store.NullTexts(cancel), store.NullTexts(ended),
		store.NullTexts(latest), store.NullTexts(next), store.NullTexts(failed), pq.Int64Array(retries),
		store.NullTexts(oa), store.NullTexts(ol), store.NullTexts(os), store.NullTexts(oe), store.NullTexts(disc))
	return out, store.Translate(err)
}

func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

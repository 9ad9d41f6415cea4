package subscriptions

import (
	"context"
	"math/big"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Rating and upcoming charges read usage from the hourly and daily buckets
// (metering.AggregateMany), never by scanning a period's events: the cost
// stays flat as events pile up, and a period whose events were archived
// and dropped by retention still rates the same.

// periodUsage rates nothing: it reads, in one statement, the usage of each
// metered subscription's current period (by its meter's aggregation), for
// those whose period is ending.
func periodUsage(ctx context.Context, tx *store.Tx, xs []Subscription) (map[string]*big.Int, error) {
	var ids []string
	var spans []metering.Span
	for _, x := range xs {
		if !x.Metered() || x.Status != Active || x.CustomerID == nil || x.MeterID == nil {
			continue
		}
		ids = append(ids, x.ID)
		spans = append(spans, metering.Span{Scope: tenant.Scope{MerchantID: x.MerchantID, Mode: x.Mode}, CustomerID: *x.CustomerID,
			MeterID: *x.MeterID, From: *x.CurrentPeriodStart, To: *x.CurrentPeriodEnd})
	}
	out := map[string]*big.Int{}
	if len(spans) == 0 {
		return out, nil
	}
	aggs, err := metering.AggregateMany(ctx, tx, spans)
	if err != nil {
		return nil, err
	}
	aggregation, err := aggregations(ctx, tx, spans)
	if err != nil {
		return nil, err
	}
	for i, sp := range spans {
		if a, ok := aggregation[[2]string{sp.Scope.MerchantID, sp.MeterID}]; ok {
			out[ids[i]] = aggs[i].Big(a)
		}
	}
	return out, nil
}

// aggregations returns the aggregation of each span's meter, by merchant
// and meter id.
func aggregations(ctx context.Context, q store.Querier, spans []metering.Span) (map[[2]string]string, error) {
	merchants, meters := make([]string, len(spans)), make([]string, len(spans))
	for i, sp := range spans {
		merchants[i], meters[i] = sp.Scope.MerchantID, sp.MeterID
	}
	var rows []struct {
		MerchantID  string `db:"merchant_id"`
		ID          string `db:"id"`
		Aggregation string `db:"aggregation"`
	}
	err := q.SelectContext(ctx, &rows, `SELECT DISTINCT m.merchant_id, m.id, m.aggregation
		FROM unnest($1::text[], $2::text[]) AS k (merchant_id, id) JOIN meters m ON m.merchant_id = k.merchant_id AND m.id = k.id`,
		pq.StringArray(merchants), pq.StringArray(meters))
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make(map[[2]string]string, len(rows))
	for _, r := range rows {
		out[[2]string{r.MerchantID, r.ID}] = r.Aggregation
	}
	return out, nil
}

// usageSoFar reads the usage of x's current period up to `until`.
func usageSoFar(ctx context.Context, q store.Querier, x Subscription, until time.Time) (*big.Int, error) {
	sp := metering.Span{Scope: tenant.Scope{MerchantID: x.MerchantID, Mode: x.Mode}, CustomerID: deref(x.CustomerID),
		MeterID: deref(x.MeterID), From: *x.CurrentPeriodStart, To: until}
	aggs, err := metering.AggregateMany(ctx, q, []metering.Span{sp})
	if err != nil {
		return nil, err
	}
	aggregation, err := aggregations(ctx, q, []metering.Span{sp})
	if err != nil {
		return nil, err
	}
	return aggs[0].Big(aggregation[[2]string{sp.Scope.MerchantID, sp.MeterID}]), nil
}

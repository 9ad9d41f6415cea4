package metering

import (
	"context"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A usage summary is a hot read: a customer's page or an agent may ask for
// it on every view. It is made of a few short statements, so each round
// trip saved is a visible share of its cost; the functions here answer the
// common request in one statement and leave the refusals, which must say
// what is missing, to the plain path.

// meterRefs splits a meter reference into the id and the key it may be
// ("" for neither), as ResolveMeter reads it: an id first.
func meterRefs(ref string) (id, key string) {
	if strings.HasPrefix(ref, "meter_") {
		id = ref
	}
	if len(ref) <= MaxKeyLen && KeyPattern.MatchString(ref) {
		key = ref
	}
	return id, key
}

// targetSQL is the meter $4 (an id) or $5 (a key) of scope ($1, $2), when
// the scope's customer $3 exists.
const targetSQL = `SELECT ` + columns + ` FROM meters
	WHERE merchant_id = $1 AND mode = $2 AND (id = $4 OR key = $5)
		AND EXISTS (SELECT 1 FROM customers WHERE merchant_id = $1 AND mode = $2 AND id = $3)
	ORDER BY id = $4 DESC LIMIT 1`

// usageTarget is ResolveMeter for a summary of customerID, which must be
// the scope's, in one statement; only a refusal pays more, to say which of
// the two is missing (the customer first, as the path names it).
func usageTarget(ctx context.Context, q store.Querier, s tenant.Scope, customerID, ref string) (Meter, error) {
	if ref != "" {
		id, key := meterRefs(ref)
		var ms []Meter
		if err := q.SelectContext(ctx, &ms, targetSQL, s.MerchantID, s.Mode, customerID, id, key); err != nil {
			return Meter{}, store.Translate(err)
		}
		if len(ms) == 1 {
			return ms[0], nil
		}
	}
	if _, err := customers.GetForPath(ctx, q, s, customerID); err != nil {
		return Meter{}, err
	}
	return ResolveMeter(ctx, q, s, ref)
}

// usageOnce is Usage over [from, to) in one statement: the meter, the
// customer's existence and every span's aggregate. ok=false, with no
// error, when the customer or the meter is missing or the windows are
// refused: Usage's plain path then says which, in its order.
func usageOnce(ctx context.Context, q store.Querier, s tenant.Scope, customerID string, in UsageInput, from, to time.Time) (Summary, bool, error) {
	u, spans, err := frame(customerID, from, to, in.Window)
	if err != nil || in.Meter == "" || !from.Before(to) {
		return Summary{}, false, nil
	}
	id, key := meterRefs(in.Meter)
	var rows []struct {
		Meter
		spanRow
	}
	query := `WITH m AS (` + targetSQL + `)
SELECT m.*, x.* FROM m CROSS JOIN LATERAL (` + spansSQL(anyAggColumns, "m.id", 6) + `) x`
	args := append([]any{s.MerchantID, s.Mode, customerID, id, key}, spanArgs(spans)...)
	if err := q.SelectContext(ctx, &rows, query, args...); err != nil {
		return Summary{}, false, store.Translate(err)
	}
	if len(rows) == 0 {
		return Summary{}, false, nil
	}
	parts := make([]spanRow, len(rows))
	for i, r := range rows {
		parts[i] = r.spanRow
	}
	u.Meter = rows[0].Meter
	return u.fill(sumSpans(parts, len(spans))), true, nil
}

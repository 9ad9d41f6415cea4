package metering

import (
	"context"
	"strings"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A usage summary is a hot read: a customer's page or an agent may ask for
// it on every view. It is made of a few short statements, so each round
// trip saved is a visible share of its cost. (Folding the windows'
// aggregates into the same statement as well was measured slower: its
// generic plan aggregates every kind for every meter.)

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

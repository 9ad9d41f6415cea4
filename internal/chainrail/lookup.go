package chainrail

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// get returns the operation stored under key in s, nil when there is none.
func (r *Rail) get(ctx context.Context, q store.Querier, s tenant.Scope, key string) (*row, error) {
	var out []row
	err := q.SelectContext(ctx, &out, `SELECT `+rowColumns+` FROM chain_settlements WHERE merchant_id = $1 AND mode = $2 AND key = $3`,
		s.MerchantID, s.Mode, key)
	if err != nil || len(out) == 0 {
		return nil, store.Translate(err)
	}
	return &out[0], nil
}

// Lookup returns the operation stored under key in s, as it stands (a
// pending one is not advanced); ok=false when there is none.
func (r *Rail) Lookup(ctx context.Context, s tenant.Scope, key string) (st rail.Settlement, ok bool, err error) {
	w, err := r.get(ctx, r.db, s, key)
	if err != nil || w == nil {
		return rail.Settlement{}, false, err
	}
	return r.settlement(*w), true, nil
}

// LatestPayment returns the newest live payment of the invoice in s, in
// whatever state; ok=false when none was ever submitted.
func (r *Rail) LatestPayment(ctx context.Context, s tenant.Scope, invoiceID string) (st rail.Settlement, ok bool, err error) {
	var ws []row
	err = r.db.SelectContext(ctx, &ws, `SELECT `+rowColumns+` FROM chain_settlements WHERE merchant_id = $1 AND mode = $2
		AND kind = 'pay' AND nonce = $3 ORDER BY requested_at DESC LIMIT 1`, s.MerchantID, s.Mode, invoiceID)
	if err != nil || len(ws) == 0 {
		return rail.Settlement{}, false, store.Translate(err)
	}
	return r.settlement(ws[0]), true, nil
}

package credits

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Balance is a customer's credit balance, as
// GET /v1/customers/{id}/credit_balance answers it.
type Balance struct {
	CustomerID string
	// AccountID is empty when the customer was never granted credits; the
	// other amounts are then zero.
	AccountID string
	Balance   money.Amount
	Granted   money.Amount // lifetime
	Consumed  money.Amount // lifetime debits; expiries are not consumption
	// Expired is what grants lost by expiring, lifetime, including those
	// due at now whose expiry entry is not written yet, so that Balance =
	// Granted - Consumed - Expired.
	Expired money.Amount
}

// GetBalance returns the balance at now of the customer whose id is in a
// URL path. Grant remainders already expired at now are left out even when
// no expiry entry has been written yet. Returns unknown_customer (404).
func GetBalance(ctx context.Context, q store.Querier, s tenant.Scope, customerID string, now time.Time) (Balance, error) {
	c, err := customers.GetForPath(ctx, q, s, customerID)
	if err != nil {
		return Balance{}, err
	}
	// One statement, so the account row and the grant remainders come from
	// one snapshot even while debits commit.
	var rows []struct {
		account
		Due money.Amount `db:"due"`
	}
	err = q.SelectContext(ctx, &rows, `SELECT `+accountColumns+`,
		COALESCE((SELECT sum(g.remaining) FROM credit_grant_balances g
			WHERE g.merchant_id = a.merchant_id AND g.account_id = a.id AND g.live AND g.expires_at <= $4), 0) AS due
		FROM credit_accounts a WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3`, s.MerchantID, s.Mode, c.ID, now)
	if err != nil {
		return Balance{}, store.Translate(err)
	}
	b := Balance{CustomerID: c.ID}
	if len(rows) == 1 {
		r := rows[0]
		b.AccountID, b.Balance, b.Granted, b.Consumed = r.ID, r.Balance-r.Due, r.Granted, r.Consumed
		// The account's balance is the sum of its ledger entries: grants
		// less debits less expiries, so the expiries need no scan of the
		// ledger. Cannot overflow: each term is within the balance's range.
		b.Expired = b.Granted - b.Consumed - b.Balance
	}
	return b, nil
}

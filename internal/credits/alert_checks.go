package credits

import (
	"context"
	"strconv"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// balanceCheck is a debit's customer and its balance before the debit.
type balanceCheck struct {
	s          tenant.Scope
	customerID string
	before     money.Amount
}

// alertCheckChannel wakes the alert job; package alerts names the same.
const alertCheckChannel = "tollgate_alert_checks"

// leaveBalanceChecks leaves the alert job a check for each debited customer
// that an active credit_balance_below alert watches, in the debit's
// transaction, so a crash cannot lose one. A check already waiting keeps
// the balance before the earliest change it stands for.
func leaveBalanceChecks(ctx context.Context, tx *store.Tx, cs []balanceCheck) error {
	if len(cs) == 0 {
		return nil
	}
	var ms, modes, custs, before []string
	for _, c := range cs {
		ms, modes, custs = append(ms, c.s.MerchantID), append(modes, string(c.s.Mode)), append(custs, c.customerID)
		before = append(before, strconv.FormatInt(int64(c.before), 10))
	}
	var n int
	err := tx.GetContext(ctx, &n, `WITH ins AS (
			INSERT INTO alert_checks (merchant_id, mode, customer_id, subject, id, prev_balance)
			SELECT DISTINCT ON (c.m, c.mode, c.cus) c.m, c.mode, c.cus, 'credits', 'chk_' || replace(gen_random_uuid()::text, '-', ''), c.before
			FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) WITH ORDINALITY AS c(m, mode, cus, before, n)
			WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = c.m AND a.mode = c.mode AND a.status = 'active'
				AND a.meter_id IS NULL AND a.type = 'credit_balance_below' AND (a.customer_id IS NULL OR a.customer_id = c.cus))
			ORDER BY c.m, c.mode, c.cus, c.n
			ON CONFLICT DO NOTHING
			RETURNING 1
		) SELECT count(*) FROM ins`, pq.StringArray(ms), pq.StringArray(modes), pq.StringArray(custs), pq.StringArray(before))
	if err != nil {
		return store.Translate(err)
	}
	if n > 0 {
		tx.Notify(alertCheckChannel)
	}
	return nil
}

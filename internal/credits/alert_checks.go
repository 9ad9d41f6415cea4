package credits

import (
	"context"
	"strconv"

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

// watchedColumn is true when an active credit_balance_below alert watches
// the credit account aliased a: only then does a change of its balance
// leave the alert job a check.
const watchedColumn = `EXISTS (SELECT 1 FROM alerts al WHERE al.merchant_id = a.merchant_id AND al.mode = a.mode AND al.status = 'active'
		AND al.meter_id IS NULL AND al.type = 'credit_balance_below'
		AND (al.customer_id IS NULL OR al.customer_id = a.customer_id)) AS watched`

// leaveBalanceChecks leaves the alert job a check for each debit of a
// customer that an active credit_balance_below alert watches, with the
// balance before it, in the debit's transaction, so a crash cannot lose
// one.
func leaveBalanceChecks(ctx context.Context, tx *store.Tx, cs []balanceCheck) error {
	if len(cs) == 0 {
		return nil
	}
	var ms, modes, custs, before []string
	for _, c := range cs {
		ms, modes, custs = append(ms, c.s.MerchantID), append(modes, string(c.s.Mode)), append(custs, c.customerID)
		before = append(before, strconv.FormatInt(int64(c.before), 10))
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO alert_checks (id, merchant_id, mode, customer_id, subject, prev_balance)
		SELECT 'chk_' || replace(gen_random_uuid()::text, '-', ''), c.m, c.mode, c.cus, 'credits', c.before
		FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) AS c(m, mode, cus, before)
		WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.merchant_id = c.m AND a.mode = c.mode AND a.status = 'active'
			AND a.meter_id IS NULL AND a.type = 'credit_balance_below' AND (a.customer_id IS NULL OR a.customer_id = c.cus))`, store.Texts(ms), store.Texts(modes), store.Texts(custs), store.Texts(before))
	return store.Translate(err)
}

package credits

import (
	"context"
	"fmt"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// commit records op with the pending entries and projections. When op's
// idempotency key was taken meanwhile by a concurrent request for another
// account, nothing is written and the stored operation is returned with
// replayed=true (or invalid_request if its parameters differ).
func (l *ledger) commit(ctx context.Context, q store.Querier, op operation) (stored operation, replayed bool, err error) {
	op.ID, op.AccountID = id.New("cop"), l.acct.ID
	written, err := l.write(ctx, q, &op)
	if err != nil || written {
		return op, false, err
	}
	// The unique index made the insert wait for the other request to
	// commit, so its operation is visible now.
	stored, ok, err := replay(ctx, q, l.s, op)
	if err == nil && !ok {
		err = apperr.New(apperr.Internal, "idempotency key conflict without a stored operation")
	}
	return stored, ok, err
}

// sqlArgs numbers placeholders as arguments are added.
type sqlArgs []any

func (a *sqlArgs) add(v any, cast string) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d::%s", len(*a), cast)
}

// write stores op (nil for the sweep), the pending entries, the changed and
// new grant remainders and the account's projection in one statement: the
// account lock is held for as few round trips as possible, which bounds the
// debits per second one account can take. Every part is conditional on the
// operation's insert, so an idempotency-key conflict writes nothing and
// returns written=false.
func (l *ledger) write(ctx context.Context, q store.Querier, op *operation) (written bool, err error) {
	a := sqlArgs{}
	m, mode, acct, now := a.add(l.s.MerchantID, "text"), a.add(l.s.Mode, "text"), a.add(l.acct.ID, "text"), a.add(l.now, "timestamptz")
	var b strings.Builder
	if op != nil {
		fmt.Fprintf(&b, `WITH op AS (INSERT INTO credit_operations (merchant_id, mode, id, account_id, customer_id, kind, amount, covered, balance,
				entry_id, reason, allow_negative, expires_at, idempotency_key, created_at)
			VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
			ON CONFLICT (merchant_id, mode, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id)`,
			m, mode, a.add(op.ID, "text"), acct, a.add(op.CustomerID, "text"), a.add(op.Kind, "text"), a.add(op.Amount, "numeric"),
			a.add(op.Covered, "numeric"), a.add(op.Balance, "numeric"), a.add(op.EntryID, "text"), a.add(op.Reason, "text"),
			a.add(op.AllowNegative, "boolean"), a.add(op.ExpiresAt, "timestamptz"), a.add(op.IdempotencyKey, "text"), now)
	} else {
		b.WriteString(`WITH op AS (SELECT NULL::text AS id)`)
	}
	if len(l.entries) > 0 {
		rows := make([]string, len(l.entries))
		for i, e := range l.entries {
			rows[i] = "(" + strings.Join([]string{a.add(e.ID, "text"), a.add(e.Kind, "text"), a.add(e.Amount, "numeric"), a.add(e.GrantID, "text"),
				a.add(e.ExpiresAt, "timestamptz"), a.add(e.Settled, "numeric"), a.add(e.EffectiveAt, "timestamptz")}, ", ") + ")"
		}
		fmt.Fprintf(&b, `, ent AS (INSERT INTO credit_entries (merchant_id, mode, id, account_id, operation_id, kind, amount, grant_id, expires_at, settled, effective_at, created_at)
			SELECT %s, %s, v.id, %s, CASE WHEN v.kind = 'expiry' THEN NULL ELSE (SELECT id FROM op) END, v.kind, v.amount, v.grant_id, v.expires_at, v.settled, v.effective_at, %s
			FROM (VALUES %s) AS v (id, kind, amount, grant_id, expires_at, settled, effective_at)
			WHERE EXISTS (SELECT 1 FROM op)
			RETURNING id, seq, kind, amount, expires_at)`, m, mode, acct, now, strings.Join(rows, ", "))
	}
	var changed []string
	for _, bk := range l.buckets {
		if bk.changed {
			changed = append(changed, "("+a.add(bk.GrantID, "text")+", "+a.add(bk.Remaining, "numeric")+")")
		}
	}
	if len(changed) > 0 {
		// Probed and updated by ctid, as in the batch's write (see
		// writes.write), so no plan scans the remainders.
		fmt.Fprintf(&b, `, upd AS (UPDATE credit_grant_balances g SET remaining = v.remaining
			FROM (SELECT x.row, v.remaining FROM (VALUES %s) AS v (grant_id, remaining)
				CROSS JOIN LATERAL (SELECT b.ctid AS row FROM credit_grant_balances b WHERE b.merchant_id = %s AND b.grant_id = v.grant_id OFFSET 0) x) v
			WHERE g.ctid = v.row AND EXISTS (SELECT 1 FROM op))`, strings.Join(changed, ", "), m)
	}
	if g := l.newGrant; g != nil {
		// The grant entry's seq (from RETURNING: sibling statements cannot
		// see each other's rows) orders grants that expire together.
		fmt.Fprintf(&b, `, nb AS (INSERT INTO credit_grant_balances (merchant_id, mode, grant_id, account_id, amount, remaining, expires_at, seq)
			SELECT %s, %s, id, %s, amount, %s, expires_at, seq FROM ent WHERE kind = 'grant')`, m, mode, acct, a.add(g.Remaining, "numeric"))
	}
	fmt.Fprintf(&b, `, acc AS (UPDATE credit_accounts SET balance = %s, granted = %s, consumed = %s, debt = %s
			WHERE merchant_id = %s AND mode = %s AND customer_id = %s AND EXISTS (SELECT 1 FROM op))
		SELECT count(*) FROM op`, a.add(l.acct.Balance, "numeric"), a.add(l.acct.Granted, "numeric"),
		a.add(l.acct.Consumed, "numeric"), a.add(l.acct.Debt, "numeric"), m, mode, a.add(l.acct.CustomerID, "text"))
	var n int
	if err := q.GetContext(ctx, &n, b.String(), a...); err != nil {
		return false, store.Translate(err)
	}
	return n == 1, nil
}

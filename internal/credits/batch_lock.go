package credits

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// lock locks the accounts of the customers the items name: by customer id
// when one is given (as customers.Resolve does), else by external id.
// They are found first, then locked one by one in (merchant, id) order: a
// nested loop over the sorted list, since a lock in a LATERAL subquery is
// taken as each outer row is read.
//
// The same statement reads what read would next, saving the batch a round
// trip: each account's first grant remainders and the stored operations of
// the items' idempotency keys. Those come from the statement's snapshot,
// taken before any wait for a lock, while a lock that waited for another
// transaction returns the account as that one left it. Every change to an
// account's remainders updates its row in the same transaction (batch
// writes, sweeps), so an account whose locked row is not the version the
// snapshot holds (another xmin) may have remainders the snapshot does not
// show: read reads those accounts' remainders again. An operation stored
// since the snapshot is met by the write's insert, which then fails the
// batch with errConcurrent, as one stored between read and write would;
// read also reads the keys again with a changed account, which is when a
// concurrent call on it is likeliest.
//
// The batch statements look rows up in LATERAL subqueries that OFFSET 0
// keeps from being flattened: each array element is then an index probe
// whatever the planner believes about the tables. Joined flat, a fresh,
// never-analysed table got plans that scanned it once per element.
func (bt *batchTx) lock(ctx context.Context) error {
	byID, byExt, keys := newTuples(1), newTuples(1), newTuples(1)
	for _, it := range bt.items {
		if r := refOf(it); r.ID != nil {
			byID.add(it.s, *r.ID)
		} else {
			byExt.add(it.s, *r.ExternalID)
		}
		if k := it.idempotencyKey(); k != nil {
			keys.add(it.s, *k)
		}
	}
	args := byID.args(byExt.args(bt.items[0].s.MerchantID)...)
	var dueBy *string
	bt.ahead, dueBy = bt.readAhead()
	rows, err := bt.tx.QueryContext(ctx, lockSQL, append(args, keys.args(bt.ahead, dueBy)...)...)
	if err != nil {
		return store.Translate(err)
	}
	defer rows.Close()
	var read []readRow
	var r readRow
	var a account
	var ext *string
	var watched, moved bool
	dest := append(r.dests(), (*int64)(&a.Granted), (*int64)(&a.Consumed), (*int64)(&a.Debt), &ext, &watched, &moved)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return store.Translate(err)
		}
		if r.Row != "account" {
			read = append(read, r)
			continue
		}
		a.MerchantID, a.Mode, a.ID, a.CustomerID, a.Balance = r.MerchantID, r.Mode, r.ID, r.CustomerID, r.Balance
		l := &ledger{s: tenant.Scope{MerchantID: r.MerchantID, Mode: r.Mode}, acct: a, unwatched: !watched}
		bt.locked = append(bt.locked, l)
		bt.index(l, ext)
		if moved {
			bt.moved = append(bt.moved, l)
		}
	}
	if err := rows.Err(); err != nil {
		return store.Translate(err)
	}
	bt.take(bt.locked, read)
	for _, l := range bt.moved {
		l.buckets = nil
	}
	return nil
}

// readAhead is how many grant remainders of each account lock reads, and
// the time by which they must be due to be returned (nil: any). A batch of
// grants draws on nothing: it only expires the remainders due at its items'
// times, so it asks for the first one in drawing order and gets it only if
// it is due, when all of them are then read (see read); otherwise nothing.
// (The lock of a batch of grants then returns a row an account instead of
// three; BenchmarkCreditGrantsHTTP1000Accounts: 381 allocations a grant,
// server and client together, down to 341.)
func (bt *batchTx) readAhead() (int, *string) {
	var latest time.Time
	for _, it := range bt.items {
		if it.debit != nil {
			return bt.cfg.readAhead, nil
		}
		if it.now.After(latest) {
			latest = it.now
		}
	}
	due := ts(latest)
	return 1, &due
}

// lockSQL locks the accounts of a batch (see lock), all of one merchant
// ($7), which the locking probe names so the lock stays on it, and reads
// the first $11 grant remainders of each (in drawing order; only those
// due by $12 when it is set) and the stored operations of the keys
// $8-$10. Its rows share readSQL's columns, and an account's own ones.
//
// moved compares the locked row's xmin to the one the snapshot read.
const lockSQL = `WITH want AS (
			SELECT x.* FROM unnest($1::text[], $2::text[], $3::text[]) AS r (merchant_id, mode, customer_id)
			CROSS JOIN LATERAL (SELECT a.merchant_id, a.mode, a.id, a.customer_id, c.external_customer_id, a.xmin::text AS seen FROM credit_accounts a
				JOIN customers c ON c.merchant_id = a.merchant_id AND c.id = a.customer_id
				WHERE a.merchant_id = r.merchant_id AND a.mode = r.mode AND a.customer_id = r.customer_id OFFSET 0) x
			UNION
			SELECT x.* FROM unnest($4::text[], $5::text[], $6::text[]) AS r (merchant_id, mode, ext)
			CROSS JOIN LATERAL (SELECT c.merchant_id, c.mode, c.id, c.external_customer_id FROM customers c
				WHERE c.merchant_id = r.merchant_id AND c.mode = r.mode AND c.external_customer_id = r.ext OFFSET 0) c
			CROSS JOIN LATERAL (SELECT a.merchant_id, a.mode, a.id, a.customer_id, c.external_customer_id, a.xmin::text AS seen FROM credit_accounts a
				WHERE a.merchant_id = c.merchant_id AND a.mode = c.mode AND a.customer_id = c.id OFFSET 0) x
		)
		SELECT 'account' AS row, a.merchant_id, a.mode, 0::bigint AS seq, a.id, a.id AS account_id, a.customer_id, '' AS kind,
			0::numeric AS amount, 0::numeric AS covered, a.balance, NULL::text AS entry_id, '' AS reason, false AS allow_negative,
			NULL::timestamptz AS expires_at, NULL::text AS idempotency_key,
			a.granted, a.consumed, a.debt, w.external_customer_id, ` + watchedColumn + `, a.version <> w.seen AS moved
		FROM (SELECT * FROM want ORDER BY merchant_id, id) w
		CROSS JOIN LATERAL (SELECT ` + accountColumns + `, a.xmin::text AS version FROM credit_accounts a
			WHERE a.merchant_id = $7 AND a.mode = w.mode AND a.customer_id = w.customer_id FOR UPDATE) a
		UNION ALL
		SELECT 'grant', g.*, 0, 0, 0, NULL, false, false FROM want w
		CROSS JOIN LATERAL (SELECT r.* FROM (` + remaindersSQL + ` WHERE g.merchant_id = w.merchant_id AND g.account_id = w.id AND g.live
			ORDER BY g.expires_at NULLS LAST, g.seq LIMIT $11::bigint) r WHERE $12::timestamptz IS NULL OR r.expires_at <= $12) g
		UNION ALL
		SELECT 'operation', o.*, 0, 0, 0, NULL, false, false FROM unnest($8::text[], $9::text[], $10::text[]) AS r (merchant_id, mode, idempotency_key)
		CROSS JOIN LATERAL (` + operationsSQL + `) o`

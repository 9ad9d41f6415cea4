package credits

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// read completes the grant remainders the lock read: those of the
// accounts that changed since its snapshot (see lock), read again with
// the stored operations of the items' idempotency keys, as a statement of
// its own, so it sees what the transactions the lock waited for
// committed (and so a replay of a request for the same account that
// committed meanwhile). Accounts the batch creates have no grants yet. An
// account whose first remainders may not be enough for the batch's
// debits, or whose expiries may reach past them, is read again whole (see
// enough). With no account changed and each one's first remainders
// enough, it sends nothing.
func (bt *batchTx) read(ctx context.Context) error {
	ahead := bt.ahead
	if len(bt.moved) > 0 {
		accts, keys := newTuples(1), newTuples(1)
		for _, l := range bt.moved {
			accts.add(l.s, l.acct.ID)
		}
		for _, it := range bt.items {
			if k := it.idempotencyKey(); k != nil {
				keys.add(it.s, *k)
			}
		}
		if err := bt.readRows(ctx, bt.moved, accts.args(keys.args(ahead)...)); err != nil {
			return err
		}
	}
	var again []*ledger
	for _, l := range bt.locked {
		if len(l.buckets) >= ahead && !bt.enough(l) {
			l.buckets = nil
			again = append(again, l)
		}
	}
	return bt.readAll(ctx, again)
}

// readAll reads every live grant remainder of the accounts of ls.
func (bt *batchTx) readAll(ctx context.Context, ls []*ledger) error {
	if len(ls) == 0 {
		return nil
	}
	accts := newTuples(1)
	for _, l := range ls {
		accts.add(l.s, l.acct.ID)
	}
	return bt.readRows(ctx, ls, accts.args(newTuples(1).args(nil)...))
}

// readRow is a row of readSQL: a grant remainder, in operation's columns
// (id is grant_id, amount remaining, with expires_at, and seq for the
// drawing order), or a stored operation.
type readRow struct {
	Row        string
	MerchantID string
	Mode       tenant.Mode
	Seq        int64
	operation
}

// dests are the fields of r in readSQL's column order, to scan into
// without the reflection sqlx spends on every row.
func (r *readRow) dests() []any {
	o := &r.operation
	return []any{&r.Row, &r.MerchantID, (*string)(&r.Mode), &r.Seq, &o.ID, &o.AccountID, &o.CustomerID, &o.Kind,
		(*int64)(&o.Amount), (*int64)(&o.Covered), (*int64)(&o.Balance), &o.EntryID, &o.Reason, &o.AllowNegative,
		&o.ExpiresAt, &o.IdempotencyKey}
}

// readRows runs readSQL with args and adds what it found to the ledgers
// (of ls) and the replays.
func (bt *batchTx) readRows(ctx context.Context, ls []*ledger, args []any) error {
	rows, err := bt.tx.QueryContext(ctx, readSQL, args...)
	if err != nil {
		return store.Translate(err)
	}
	defer rows.Close()
	var read []readRow
	var r readRow
	dest := r.dests()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return store.Translate(err)
		}
		read = append(read, r)
	}
	if err := rows.Err(); err != nil {
		return store.Translate(err)
	}
	bt.take(ls, read)
	return nil
}

// take adds the remainders of rows to the ledgers of ls (others' are
// dropped), in drawing order, and the operations to the replays.
func (bt *batchTx) take(ls []*ledger, rows []readRow) {
	byID := make(map[[2]string]*ledger, len(ls))
	for _, l := range ls {
		byID[[2]string{l.acct.MerchantID, l.acct.ID}] = l
	}
	seqs := map[*bucket]int64{}
	for _, r := range rows {
		if r.Row == "operation" {
			bt.replays[scopedKey(tenant.Scope{MerchantID: r.MerchantID, Mode: r.Mode}, r.IdempotencyKey)] = r.operation
			continue
		}
		l := byID[[2]string{r.MerchantID, r.AccountID}]
		if l == nil {
			continue
		}
		b := &bucket{GrantID: r.ID, Remaining: r.Amount, ExpiresAt: r.ExpiresAt}
		seqs[b] = r.Seq
		l.buckets = append(l.buckets, b)
	}
	for _, l := range ls {
		// Drawing order: soonest expiry first, never-expiring last, then
		// oldest.
		slices.SortFunc(l.buckets, func(a, b *bucket) int {
			switch {
			case a.ExpiresAt == nil && b.ExpiresAt != nil:
				return 1
			case a.ExpiresAt != nil && b.ExpiresAt == nil:
				return -1
			case a.ExpiresAt != nil:
				if c := a.ExpiresAt.Compare(*b.ExpiresAt); c != 0 {
					return c
				}
			}
			return cmp.Compare(seqs[a], seqs[b])
		})
	}
}

// enough reports whether the first remainders read of l's account serve
// every item of the batch as all of them would: the last one read is not
// due at any of its items' times (so every remainder due is among them,
// since due ones come first), and what they hold beyond those due covers
// all of its debits together (so no draw goes past them, whatever grants
// the batch adds; a grant that sorts after them is put after them, which
// only unread remainders could dispute).
func (bt *batchTx) enough(l *ledger) bool {
	var latest time.Time
	var need money.Amount
	for i, it := range bt.items {
		if bt.targets[i].l != l {
			continue
		}
		if it.now.After(latest) {
			latest = it.now
		}
		if it.debit != nil {
			var err error
			if need, err = money.Add(need, it.debit.Amount); err != nil {
				return false
			}
		}
	}
	last := l.buckets[len(l.buckets)-1]
	if last.ExpiresAt != nil && !last.ExpiresAt.After(latest) {
		return false
	}
	var have money.Amount
	for _, b := range l.buckets {
		if b.ExpiresAt == nil || b.ExpiresAt.After(latest) {
			have += b.Remaining // cannot overflow: each is part of the balance
		}
	}
	return have >= need
}

func (it *item) idempotencyKey() *string {
	if it.grant != nil {
		return it.grant.IdempotencyKey
	}
	return it.debit.IdempotencyKey
}

// apply applies the items in arrival order, then writes what they changed
// and emits their events.
func (bt *batchTx) apply(ctx context.Context) error {
	var touched []*ledger
	seen := map[*ledger]bool{}
	bt.w.reserve(len(bt.items))
	for i, it := range bt.items {
		t := bt.targets[i]
		if t.later != nil {
			// A grant earlier in the batch opened the account.
			if l := bt.accounts[*t.later]; l != nil {
				if j, ok := bt.openedBy[l]; ok && j < i {
					t = target{l: l}
				}
			}
		}
		if t.err != nil {
			bt.outs[i].err = t.err
			continue
		}
		bt.outs[i] = bt.applyItem(it, t.l)
		if !seen[t.l] {
			seen[t.l] = true
			touched = append(touched, t.l)
		}
	}
	for _, l := range touched {
		bt.w.ledger(l, bt.fresh)
	}
	if err := bt.w.write(ctx, bt.tx, bt.items[0].s.MerchantID); err != nil {
		return err
	}
	return leaveBalanceChecks(ctx, bt.tx, bt.checks)
}

// applyItem is grant or debit after the account is locked: the replay
// check, then the change on the in-memory ledger. An error leaves the
// ledger as it was, but for expiries due at the item's now.
func (bt *batchTx) applyItem(it *item, l *ledger) outcome {
	want := it.operation(l.acct.CustomerID)
	if op, ok := bt.replays[it.key]; ok && it.key != "" {
		if diff := op.differs(want); diff != "" {
			return outcome{err: errKeyReused(diff)}
		}
		return outcome{grant: grantResult(op), debit: debitResult(op)}
	}
	start := len(l.entries)
	l.now = it.now
	l.expire(it.now)
	m := l.mark()
	var err error
	if it.grant != nil {
		var entryID string
		if entryID, err = l.grant(want.Amount, want.ExpiresAt); err == nil {
			bt.addBucket(l)
			want.Covered, want.EntryID = want.Amount, &entryID
		}
	} else {
		want.Covered, err = l.debit(want.Amount, want.AllowNegative)
	}
	if err != nil {
		l.restore(m)
		bt.w.entries(l, l.entries[start:], "", it.now)
		return outcome{err: err}
	}
	want.ID, want.AccountID, want.Balance = id.New("cop"), l.acct.ID, l.acct.Balance
	bt.w.op(l, want, it.now)
	bt.w.entries(l, l.entries[start:], want.ID, it.now)
	var out outcome
	if it.grant != nil {
		out.grant = grantResult(want)
		out.grant.Deduplicated = false
		bt.w.event(it.s, events.CreditGranted, it.now, out.grant.Wire())
	} else {
		out.debit = debitResult(want)
		out.debit.Deduplicated = false
		bt.w.event(it.s, events.CreditDebited, it.now, out.debit.Wire())
		if !l.unwatched {
			bt.checks = append(bt.checks, balanceCheck{it.s, out.debit.CustomerID, out.debit.Balance + out.debit.Covered})
		}
	}
	return out
}

// operation is the operation the item asks for, as grant and debit build
// it for the replay check.
func (it *item) operation(customerID string) operation {
	if in := it.grant; in != nil {
		return operation{Kind: kindGrant, CustomerID: customerID, Amount: in.Amount, Reason: reasonOr(in.Reason, DefaultGrantReason),
			ExpiresAt: in.ExpiresAt, IdempotencyKey: in.IdempotencyKey}
	}
	in := it.debit
	return operation{Kind: kindDebit, CustomerID: customerID, Amount: in.Amount, Reason: reasonOr(in.Reason, DefaultDebitReason),
		AllowNegative: in.AllowNegative, IdempotencyKey: in.IdempotencyKey}
}

// addBucket puts the grant just made among the account's remainders in
// drawing order, so later items of the batch draw from it as they would
// after it committed: after every grant expiring no later, before those
// expiring later or never.
func (bt *batchTx) addBucket(l *ledger) {
	nb := l.newGrant
	l.newGrant = nil
	bt.fresh[nb.GrantID] = true
	pos := len(l.buckets)
	if nb.ExpiresAt != nil {
		for j, o := range l.buckets {
			if o.ExpiresAt == nil || nb.ExpiresAt.Before(*o.ExpiresAt) {
				pos = j
				break
			}
		}
	}
	l.buckets = append(l.buckets[:pos], append([]*bucket{nb}, l.buckets[pos:]...)...)
}

// ledgerMark is a ledger's state before an item, to undo the item's
// change when it fails part way (debit draws from grants before it checks
// for overflow; alone, the transaction's rollback undoes that).
type ledgerMark struct {
	acct      account
	entries   int
	remaining []money.Amount
	changed   []bool
}

func (l *ledger) mark() ledgerMark {
	m := ledgerMark{acct: l.acct, entries: len(l.entries), remaining: make([]money.Amount, len(l.buckets)), changed: make([]bool, len(l.buckets))}
	for i, b := range l.buckets {
		m.remaining[i], m.changed[i] = b.Remaining, b.changed
	}
	return m
}

func (l *ledger) restore(m ledgerMark) {
	l.acct, l.entries = m.acct, l.entries[:m.entries]
	for i, b := range l.buckets {
		b.Remaining, b.changed = m.remaining[i], m.changed[i]
	}
	l.newGrant = nil
}

// readSQL reads the first $7 live grant remainders (all with NULL) of
// each account, in drawing order, and the stored operations of the
// idempotency keys.
const readSQL = `SELECT 'grant' AS row, g.* FROM unnest($1::text[], $2::text[], $3::text[]) AS r (merchant_id, mode, account_id)
		CROSS JOIN LATERAL (` + remaindersSQL + ` WHERE g.merchant_id = r.merchant_id AND g.account_id = r.account_id AND g.live
			ORDER BY g.expires_at NULLS LAST, g.seq LIMIT $7::bigint) g
		UNION ALL
		SELECT 'operation', o.* FROM unnest($4::text[], $5::text[], $6::text[]) AS r (merchant_id, mode, idempotency_key)
		CROSS JOIN LATERAL (` + operationsSQL + `) o`

// remaindersSQL selects grant remainders g in readRow's columns.
const remaindersSQL = `SELECT merchant_id, mode, seq, grant_id AS id, account_id, '' AS customer_id, '' AS kind, remaining AS amount,
				0::numeric AS covered, 0::numeric AS balance, NULL::text AS entry_id, '' AS reason, false AS allow_negative, expires_at,
				NULL::text AS idempotency_key
			FROM credit_grant_balances g`

// operationsSQL selects the stored operation of the key of r.
const operationsSQL = `SELECT merchant_id, mode, seq, ` + operationColumns + ` FROM credit_operations o
			WHERE o.merchant_id = r.merchant_id AND o.mode = r.mode AND o.idempotency_key = r.idempotency_key
				AND o.idempotency_key IS NOT NULL OFFSET 0`

package credits

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// writes is what a batch changed, one array per column: the statement's
// text is the same for every batch (prepared once per connection), and
// arrays have none of the 65535-parameter limit of a VALUES list.
type writes struct {
	// credit_operations
	opM, opMode, opID, opAcct, opCus, opKind, opReason, opAt []string
	opAmount, opCovered, opBalance                           []int64
	opEntry, opExpires, opKey                                []*string
	opNeg                                                    []bool
	// credit_entries
	enM, enMode, enID, enAcct, enKind, enEffective, enAt []string
	enAmount, enSettled                                  []int64
	enOp, enGrant, enExpires                             []*string
	// new grant remainders, joined to their grant entries for the seq
	nbGrant     []string
	nbRemaining []int64
	// changed grant remainders
	ubM, ubGrant []string
	ubRemaining  []int64
	// account projections, by customer (the account's unique key that
	// no other index of the table shares a prefix with)
	acM, acMode, acCus                       []string
	acBalance, acGranted, acConsumed, acDebt []int64
	// events, with the deliveries their endpoints subscribe to
	evM, evMode, evID, evType, evData, evAt []string
	// err is an event that could not be encoded: it fails the batch.
	err error
	// at is the time last formatted, as text (see ts).
	at     time.Time
	atText string
}

// ts is the package's ts, the last time formatted reused: an item's
// operation, entries and event are written at its one time.
func (w *writes) ts(t time.Time) string {
	if w.atText == "" || !t.Equal(w.at) {
		w.at, w.atText = t, ts(t)
	}
	return w.atText
}

// reserve makes room in the columns for n operations, each with an entry,
// an account and an event, which a batch of n items mostly writes: the
// columns then do not grow by copying, append after append.
func (w *writes) reserve(n int) {
	for _, c := range []*[]string{&w.opM, &w.opMode, &w.opID, &w.opAcct, &w.opCus, &w.opKind, &w.opReason, &w.opAt,
		&w.enM, &w.enMode, &w.enID, &w.enAcct, &w.enKind, &w.enEffective, &w.enAt,
		&w.acM, &w.acMode, &w.acCus, &w.evM, &w.evMode, &w.evID, &w.evType, &w.evData, &w.evAt} {
		*c = slices.Grow(*c, n)
	}
	for _, c := range []*[]int64{&w.opAmount, &w.opCovered, &w.opBalance, &w.enAmount, &w.enSettled,
		&w.acBalance, &w.acGranted, &w.acConsumed, &w.acDebt} {
		*c = slices.Grow(*c, n)
	}
	for _, c := range []*[]*string{&w.opEntry, &w.opExpires, &w.opKey, &w.enOp, &w.enGrant, &w.enExpires} {
		*c = slices.Grow(*c, n)
	}
	w.opNeg = slices.Grow(w.opNeg, n)
}

// tuples collects rows of text columns led by a scope, as one array per
// column for unnest.
type tuples [][]string

func newTuples(width int) tuples {
	t := make(tuples, 2+width)
	for i := range t {
		t[i] = []string{}
	}
	return t
}

func (t tuples) add(s tenant.Scope, vals ...string) {
	t[0] = append(t[0], s.MerchantID)
	t[1] = append(t[1], string(s.Mode))
	for i, v := range vals {
		t[2+i] = append(t[2+i], v)
	}
}

// args returns the columns as arrays, followed by more.
func (t tuples) args(more ...any) []any {
	out := make([]any, 0, len(t)+len(more))
	for _, c := range t {
		out = append(out, store.Texts(c))
	}
	return append(out, more...)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func tsp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

func (w *writes) op(l *ledger, o operation, now time.Time) {
	w.opM, w.opMode, w.opID = append(w.opM, l.acct.MerchantID), append(w.opMode, string(l.acct.Mode)), append(w.opID, o.ID)
	w.opAcct, w.opCus, w.opKind = append(w.opAcct, o.AccountID), append(w.opCus, o.CustomerID), append(w.opKind, o.Kind)
	w.opAmount, w.opCovered, w.opBalance = append(w.opAmount, int64(o.Amount)), append(w.opCovered, int64(o.Covered)), append(w.opBalance, int64(o.Balance))
	w.opEntry, w.opReason, w.opNeg = append(w.opEntry, o.EntryID), append(w.opReason, o.Reason), append(w.opNeg, o.AllowNegative)
	w.opExpires, w.opKey, w.opAt = append(w.opExpires, tsp(o.ExpiresAt)), append(w.opKey, o.IdempotencyKey), append(w.opAt, w.ts(now))
}

// entries adds ledger entries written at now by the operation opID ("" for
// none); expiry entries belong to no operation.
func (w *writes) entries(l *ledger, es []entry, opID string, now time.Time) {
	for _, e := range es {
		var op *string
		if e.Kind != kindExpiry && opID != "" {
			op = &opID
		}
		w.enM, w.enMode, w.enID, w.enAcct = append(w.enM, l.acct.MerchantID), append(w.enMode, string(l.acct.Mode)), append(w.enID, e.ID), append(w.enAcct, l.acct.ID)
		w.enOp, w.enKind, w.enAmount, w.enGrant = append(w.enOp, op), append(w.enKind, e.Kind), append(w.enAmount, int64(e.Amount)), append(w.enGrant, e.GrantID)
		w.enExpires, w.enSettled = append(w.enExpires, tsp(e.ExpiresAt)), append(w.enSettled, int64(e.Settled))
		w.enEffective, w.enAt = append(w.enEffective, w.ts(e.EffectiveAt)), append(w.enAt, w.ts(now))
	}
}

// event adds the event of an operation: its row is written, with its
// deliveries, by the batch's one write.
func (w *writes) event(s tenant.Scope, typ string, at time.Time, data any) {
	body, err := json.Marshal(data)
	if err != nil {
		w.err = cmp.Or(w.err, err)
		return
	}
	w.evM, w.evMode, w.evID = append(w.evM, s.MerchantID), append(w.evMode, string(s.Mode)), append(w.evID, id.New("evt"))
	w.evType, w.evData, w.evAt = append(w.evType, typ), append(w.evData, string(body)), append(w.evAt, w.ts(at))
}

// ledger adds the remainders and the projection of an account the batch
// changed; fresh names the grants the batch made (inserted, not updated).
func (w *writes) ledger(l *ledger, fresh map[string]bool) {
	if len(l.entries) == 0 {
		return
	}
	for _, b := range l.buckets {
		switch {
		case fresh[b.GrantID]:
			w.nbGrant, w.nbRemaining = append(w.nbGrant, b.GrantID), append(w.nbRemaining, int64(b.Remaining))
		case b.changed:
			w.ubM, w.ubGrant, w.ubRemaining = append(w.ubM, l.acct.MerchantID), append(w.ubGrant, b.GrantID), append(w.ubRemaining, int64(b.Remaining))
		}
	}
	a := l.acct
	w.acM, w.acMode, w.acCus = append(w.acM, a.MerchantID), append(w.acMode, string(a.Mode)), append(w.acCus, a.CustomerID)
	w.acBalance, w.acGranted = append(w.acBalance, int64(a.Balance)), append(w.acGranted, int64(a.Granted))
	w.acConsumed, w.acDebt = append(w.acConsumed, int64(a.Consumed)), append(w.acDebt, int64(a.Debt))
}

// write stores everything in one statement, the events and their
// deliveries included (one round trip less a batch than writing them
// apart), and wakes the delivery job once the transaction commits when it
// made any delivery. The rows to update are found
// by LATERAL index probes and updated by their ctid: a generic plan made
// while the tables had no statistics hash-joined the arrays against a
// sequential scan of every grant remainder (3.6 ms a batch at 23,000
// remainders), or probed accounts through another index led by
// merchant_id. A ctid is stable here: every account is locked by this
// transaction, and no remainder changes without its account's lock.
//
// An operation whose idempotency key a concurrent transaction took
// meanwhile fails the statement on the key's unique index: the batch then
// fails with errConcurrent (and its transaction rolls back). A plain
// insert rather than ON CONFLICT DO NOTHING: the conflict is rare (the
// lock statement read the keys), and a speculative insert costs every
// operation an extra probe of the key index and an extra WAL record.
//
// A batch is one merchant's (Batcher.next), and the updates find their rows
// by that merchant ($40), so the statement stays on one merchant.
func (w *writes) write(ctx context.Context, tx *store.Tx, merchantID string) error {
	if w.err != nil {
		return w.err
	}
	if len(w.enID) == 0 && len(w.opID) == 0 {
		return nil
	}
	str, i64, nstr := func(v []string) any { return store.Texts(v) }, func(v []int64) any { return store.Int64s(v) },
		func(v []*string) any { return store.NullTexts(v) }
	var ops, deliveries int
	err := tx.QueryRowxContext(ctx, writeSQL,
		str(w.opM), str(w.opMode), str(w.opID), str(w.opAcct), str(w.opCus), str(w.opKind), i64(w.opAmount), i64(w.opCovered), i64(w.opBalance),
		nstr(w.opEntry), str(w.opReason), pq.BoolArray(w.opNeg), nstr(w.opExpires), nstr(w.opKey), str(w.opAt),
		str(w.enM), str(w.enMode), str(w.enID), str(w.enAcct), nstr(w.enOp), str(w.enKind), i64(w.enAmount), nstr(w.enGrant),
		nstr(w.enExpires), i64(w.enSettled), str(w.enEffective), str(w.enAt),
		str(w.nbGrant), i64(w.nbRemaining),
		str(w.ubM), str(w.ubGrant), i64(w.ubRemaining),
		str(w.acM), str(w.acMode), str(w.acCus), i64(w.acBalance), i64(w.acGranted), i64(w.acConsumed), i64(w.acDebt),
		merchantID,
		str(w.evM), str(w.evMode), str(w.evID), str(w.evType), str(w.evData), str(w.evAt)).Scan(&ops, &deliveries)
	if store.UniqueViolation(err, "credit_operations_key") {
		return errConcurrent
	}
	if err != nil {
		return store.Translate(err)
	}
	if ops != len(w.opID) {
		return errConcurrent
	}
	if deliveries > 0 {
		tx.Notify(events.DeliveryChannel)
	}
	return nil
}

// writeLedgerSQL is the ledger's part of writeSQL: it probes every row it
// updates by key (plans_internal_test.go).
const writeLedgerSQL = `WITH op AS (
			INSERT INTO credit_operations (merchant_id, mode, id, account_id, customer_id, kind, amount, covered, balance,
				entry_id, reason, allow_negative, expires_at, idempotency_key, created_at)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::numeric[], $9::numeric[],
				$10::text[], $11::text[], $12::boolean[], $13::timestamptz[], $14::text[], $15::timestamptz[])
			RETURNING 1
		), ent AS (
			INSERT INTO credit_entries (merchant_id, mode, id, account_id, operation_id, kind, amount, grant_id, expires_at, settled, effective_at, created_at)
			SELECT * FROM unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::numeric[], $23::text[],
				$24::timestamptz[], $25::numeric[], $26::timestamptz[], $27::timestamptz[])
			RETURNING merchant_id, mode, id, account_id, seq, amount, expires_at
		), nb AS (
			-- The grant entry's seq orders grants that expire together.
			INSERT INTO credit_grant_balances (merchant_id, mode, grant_id, account_id, amount, remaining, expires_at, seq)
			SELECT ent.merchant_id, ent.mode, ent.id, ent.account_id, ent.amount, v.remaining, ent.expires_at, ent.seq
			FROM ent JOIN unnest($28::text[], $29::numeric[]) AS v (grant_id, remaining) ON v.grant_id = ent.id
		), upd AS (
			UPDATE credit_grant_balances g SET remaining = v.remaining
			FROM (SELECT x.row, v.remaining FROM unnest($30::text[], $31::text[], $32::numeric[]) AS v (merchant_id, grant_id, remaining)
				CROSS JOIN LATERAL (SELECT b.ctid AS row FROM credit_grant_balances b
					WHERE b.merchant_id = $40 AND b.grant_id = v.grant_id OFFSET 0) x) v
			WHERE g.merchant_id = $40 AND g.ctid = v.row
		), acc AS (
			UPDATE credit_accounts a SET balance = v.balance, granted = v.granted, consumed = v.consumed, debt = v.debt
			FROM (SELECT x.row, v.* FROM unnest($33::text[], $34::text[], $35::text[], $36::numeric[], $37::numeric[], $38::numeric[], $39::numeric[])
					AS v (merchant_id, mode, customer_id, balance, granted, consumed, debt)
				CROSS JOIN LATERAL (SELECT c.ctid AS row FROM credit_accounts c
					WHERE c.merchant_id = $40 AND c.mode = v.mode AND c.customer_id = v.customer_id OFFSET 0) x) v
			WHERE a.merchant_id = $40 AND a.ctid = v.row
		)`

// writeSQL is the batch's one write (see writes.write): the ledger, then
// the events and their deliveries.
var writeSQL = writeLedgerSQL + `, ` + writeEventsSQL + `
		SELECT (SELECT count(*) FROM op) AS operations, (SELECT count(*) FROM d) AS deliveries`

// writeEventsSQL is the events' part of writeSQL, their deliveries'
// endpoints found by the batch's merchant ($40).
var writeEventsSQL = `ev AS (
			INSERT INTO events (merchant_id, mode, id, type, data, occurred_at)
			SELECT * FROM unnest($41::text[], $42::text[], $43::text[], $44::text[], $45::jsonb[], $46::timestamptz[])
			RETURNING mode, id, type, created_at
		), ` + events.DeliveriesOf("$40")

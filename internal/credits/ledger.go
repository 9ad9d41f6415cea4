package credits

import (
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Entry kinds and operation kinds.
const (
	kindGrant  = "grant"
	kindDebit  = "debit"
	kindExpiry = "expiry"
)

// account is a credit_accounts row: the projection of its entries.
type account struct {
	MerchantID string       `db:"merchant_id"`
	Mode       tenant.Mode  `db:"mode"`
	ID         string       `db:"id"`
	CustomerID string       `db:"customer_id"`
	Balance    money.Amount `db:"balance"`
	Granted    money.Amount `db:"granted"`
	Consumed   money.Amount `db:"consumed"`
	Debt       money.Amount `db:"debt"`
}

const accountColumns = `merchant_id, mode, id, customer_id, balance, granted, consumed, debt`

// bucket is what is left of one grant (credit_grant_balances).
type bucket struct {
	GrantID   string       `db:"grant_id"`
	Remaining money.Amount `db:"remaining"`
	ExpiresAt *time.Time   `db:"expires_at"`
	changed   bool
}

// operation is a credit_operations row: one grant or debit request and the
// result a replay returns. Its columns, in operationColumns' order, are
// scanned by readRow.dests.
type operation struct {
	ID             string
	AccountID      string
	CustomerID     string
	Kind           string
	Amount         money.Amount
	Covered        money.Amount
	Balance        money.Amount
	EntryID        *string
	Reason         string
	AllowNegative  bool
	ExpiresAt      *time.Time
	IdempotencyKey *string
}

const operationColumns = `id, account_id, customer_id, kind, amount, covered, balance, entry_id, reason, allow_negative, expires_at, idempotency_key`

// entry is a ledger row to write.
type entry struct {
	ID          string
	Kind        string
	Amount      money.Amount // signed
	GrantID     *string
	ExpiresAt   *time.Time
	Settled     money.Amount
	EffectiveAt time.Time
}

func errKeyReused(diff string) error {
	return apperr.Field("idempotency_key", "was already used with different parameters (%s)", diff)
}

// differs names the first parameter in which a request differs from the
// stored operation o, or returns "".
func (o operation) differs(want operation) string {
	switch {
	case o.Kind != want.Kind:
		return "a credit " + o.Kind
	case o.CustomerID != want.CustomerID:
		return "customer"
	case o.Amount != want.Amount:
		return "amount"
	case o.Reason != want.Reason:
		return "reason"
	case o.AllowNegative != want.AllowNegative:
		return "allow_negative"
	case (o.ExpiresAt == nil) != (want.ExpiresAt == nil) || (o.ExpiresAt != nil && !o.ExpiresAt.Equal(*want.ExpiresAt)):
		return "expires_at"
	}
	return ""
}

// ledger is one locked account with its live grants, and the writes that a
// change will commit.
type ledger struct {
	s        tenant.Scope
	acct     account
	buckets  []*bucket // drawing order: soonest expiry first, never-expiring last, then oldest
	entries  []entry
	now      time.Time
	newGrant *bucket // a new grant's remainder, to insert
	// unwatched is set when the batch's lock found no active balance alert
	// on the account: its debits then leave the alert job no check, and the
	// batch makes no extra round trip while it holds the account's lock.
	unwatched bool
}

// expire writes the expiry entry of every grant due at now that still has
// a remainder. A batch calls it before each item, with that item's now.
func (l *ledger) expire(now time.Time) {
	for _, b := range l.buckets {
		if b.Remaining > 0 && b.ExpiresAt != nil && !b.ExpiresAt.After(now) {
			gid := b.GrantID
			l.entries = append(l.entries, entry{ID: id.New("cle"), Kind: kindExpiry, Amount: -b.Remaining, GrantID: &gid, EffectiveAt: *b.ExpiresAt})
			l.acct.Balance -= b.Remaining // cannot overflow: the remainder is part of the balance
			b.Remaining, b.changed = 0, true
		}
	}
}

// grant adds a grant of amount, repaying debt first, and returns its entry id.
func (l *ledger) grant(amount money.Amount, expiresAt *time.Time) (string, error) {
	balance, err := money.Add(l.acct.Balance, amount)
	if err != nil {
		return "", apperr.Field("amount", "would make the balance too large")
	}
	granted, err := money.Add(l.acct.Granted, amount)
	if err != nil {
		return "", apperr.Field("amount", "would make the lifetime granted total too large")
	}
	settled := min(l.acct.Debt, amount)
	l.acct.Balance, l.acct.Granted, l.acct.Debt = balance, granted, l.acct.Debt-settled
	e := entry{ID: id.New("cle"), Kind: kindGrant, Amount: amount, ExpiresAt: expiresAt, Settled: settled, EffectiveAt: l.now}
	l.entries = append(l.entries, e)
	l.newGrant = &bucket{GrantID: e.ID, Remaining: amount - settled, ExpiresAt: expiresAt}
	return e.ID, nil
}

// debit draws amount and returns what was covered.
func (l *ledger) debit(amount money.Amount, allowNegative bool) (money.Amount, error) {
	left := amount
	for _, b := range l.buckets {
		if left == 0 {
			break
		}
		if b.Remaining == 0 {
			continue
		}
		take := min(b.Remaining, left)
		gid := b.GrantID
		l.entries = append(l.entries, entry{ID: id.New("cle"), Kind: kindDebit, Amount: -take, GrantID: &gid, EffectiveAt: l.now})
		b.Remaining, b.changed = b.Remaining-take, true
		left -= take
	}
	covered := amount - left
	if allowNegative && left > 0 {
		debt, err := money.Add(l.acct.Debt, left)
		if err != nil {
			return 0, apperr.Field("amount", "would make the balance too small")
		}
		l.entries = append(l.entries, entry{ID: id.New("cle"), Kind: kindDebit, Amount: -left, EffectiveAt: l.now})
		l.acct.Debt, covered = debt, amount
	}
	balance, err := money.Sub(l.acct.Balance, covered)
	if err != nil {
		return 0, apperr.Field("amount", "would make the balance too small")
	}
	consumed, err := money.Add(l.acct.Consumed, covered)
	if err != nil {
		return 0, apperr.Field("amount", "would make the lifetime consumed total too large")
	}
	l.acct.Balance, l.acct.Consumed = balance, consumed
	return covered, nil
}

// Package credits owns prepaid credit balances: grants, debits and balance
// reads over an append-only ledger (migrations/004_credits.sql).
//
// Grant and Debit are the operations: each validates its input, opens a
// transaction (GrantTx and DebitTx join the caller's), changes the ledger
// and emits credit.granted or credit.debited in that transaction; a replay
// of an idempotency key emits nothing.
//
// Every change first locks the
// customer's credit account row (SELECT … FOR UPDATE), so concurrent grants
// and debits on one account apply one after another: a debit never overdraws
// without allow_negative and no update is lost. The account row and each
// grant's remainder are projections of the ledger, updated in the same
// transaction as the entries they summarise.
//
// Grants may expire. A debit draws from the grants expiring soonest first
// (never-expiring last), then oldest first, writing one entry per grant
// touched. A grant's remainder leaves the balance at its expiry time: reads
// subtract remainders already due, and the next change to the account (or
// SweepExpired) writes the expiry entry, effective at the expiry time.
//
// Idempotency keys are scoped per merchant and mode and shared by grants
// and debits: a replay returns the stored result with Deduplicated set; the
// same key with other parameters is invalid_request.
//
// The daemon's stand-alone grants and debits go through a Batcher (group
// commit, batch.go): concurrent calls are applied together in one
// transaction, with the same rules, results, events and errors as Grant
// and Debit, which remain the path of a batch that cannot be applied as
// one.
package credits

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Limits and defaults of the credit endpoints.
const (
	MaxReasonLen         = 300
	MaxIdempotencyKeyLen = 255
	DefaultGrantReason   = "API grant"
	DefaultDebitReason   = "API debit"
)

// GrantInput is a POST /v1/credit_grants request.
type GrantInput struct {
	Customer       customers.Ref
	Amount         money.Amount
	Reason         *string    // nil or empty: DefaultGrantReason
	ExpiresAt      *time.Time // nil: never expires
	IdempotencyKey *string
}

// DebitInput is a POST /v1/credit_debits request.
type DebitInput struct {
	Customer       customers.Ref
	Amount         money.Amount
	Reason         *string // nil or empty: DefaultDebitReason
	AllowNegative  bool
	IdempotencyKey *string
}

// Validate applies the API's field rules at now; errors are invalid_request
// naming the field, or customer_required.
func (in *GrantInput) Validate(now time.Time) error {
	if err := validateCommon(in.Customer, in.Amount, in.Reason, in.IdempotencyKey); err != nil {
		return err
	}
	if in.ExpiresAt != nil {
		// PostgreSQL keeps microseconds; truncating here makes a replay's
		// expires_at compare equal to the stored one.
		t := in.ExpiresAt.Truncate(time.Microsecond)
		if !t.After(now) {
			return apperr.Field("expires_at", "must be in the future")
		}
		in.ExpiresAt = &t
	}
	return nil
}

// Validate applies the API's field rules; errors are invalid_request naming
// the field, or customer_required.
func (in *DebitInput) Validate() error {
	return validateCommon(in.Customer, in.Amount, in.Reason, in.IdempotencyKey)
}

func validateCommon(c customers.Ref, amount money.Amount, reason, key *string) error {
	if amount <= 0 {
		return apperr.Field("amount", "must be a positive integer of base units")
	}
	if reason != nil && utf8.RuneCountInString(*reason) > MaxReasonLen {
		return apperr.Field("reason", "must be at most %d characters", MaxReasonLen)
	}
	if key != nil && (*key == "" || utf8.RuneCountInString(*key) > MaxIdempotencyKeyLen) {
		return apperr.Field("idempotency_key", "must be 1 to %d characters", MaxIdempotencyKeyLen)
	}
	if key != nil && fields.TextProblem(*key) != "" {
		// Only a header can carry such a key; a body's is refused when read.
		return apperr.Field("idempotency_key", "%s", fields.TextProblem(*key))
	}
	if c.Empty() {
		return apperr.New(apperr.CustomerRequired, "customer_id or external_customer_id is required")
	}
	return nil
}

func reasonOr(r *string, def string) string {
	if r == nil || *r == "" {
		return def
	}
	return *r
}

// GrantResult is the outcome of a grant (POST /v1/credit_grants).
type GrantResult struct {
	CustomerID   string
	AccountID    string
	Granted      money.Amount
	Balance      money.Amount // right after the grant
	EntryID      string       // the grant's ledger entry
	Deduplicated bool
}

// DebitResult is the outcome of a debit (POST /v1/credit_debits).
type DebitResult struct {
	CustomerID   string
	AccountID    string
	Requested    money.Amount
	Covered      money.Amount
	Shortfall    money.Amount
	Balance      money.Amount // right after the debit
	Deduplicated bool
}

// Grant is GrantTx in a transaction of its own.
func Grant(ctx context.Context, db *store.DB, s tenant.Scope, in GrantInput, now time.Time) (GrantResult, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (GrantResult, error) { return GrantTx(ctx, tx, s, in, now) })
}

// GrantTx tops up the customer's balance at now, creating the credit
// account on the first grant (and the customer from an
// external_customer_id), and emits credit.granted, in tx. Debt left by
// allow_negative debits is repaid first. Returns customer_required,
// unknown_customer (400) or invalid_request (bad fields, an idempotency key
// reused with other parameters, or a balance that would overflow).
func GrantTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in GrantInput, now time.Time) (GrantResult, error) {
	res, err := grant(ctx, tx, s, in, now)
	if err != nil || res.Deduplicated {
		return res, err
	}
	_, err = events.Emit(ctx, tx, s, events.CreditGranted, now, res.Wire())
	return res, err
}

func grant(ctx context.Context, q store.Querier, s tenant.Scope, in GrantInput, now time.Time) (GrantResult, error) {
	if err := in.Validate(now); err != nil {
		return GrantResult{}, err
	}
	reason := reasonOr(in.Reason, DefaultGrantReason)
	c, _, err := customers.Resolve(ctx, q, s, in.Customer, true, now)
	if err != nil {
		return GrantResult{}, err
	}
	acct, err := openAccount(ctx, q, s, c.ID)
	if err != nil {
		return GrantResult{}, err
	}
	want := operation{Kind: kindGrant, CustomerID: c.ID, Amount: in.Amount, Reason: reason, ExpiresAt: in.ExpiresAt, IdempotencyKey: in.IdempotencyKey}
	if op, ok, err := replay(ctx, q, s, want); ok || err != nil {
		return grantResult(op), err
	}
	l, err := loadLedger(ctx, q, s, acct, now)
	if err != nil {
		return GrantResult{}, err
	}
	entryID, err := l.grant(in.Amount, in.ExpiresAt)
	if err != nil {
		return GrantResult{}, err
	}
	want.Covered, want.Balance, want.EntryID = in.Amount, l.acct.Balance, &entryID
	op, replayed, err := l.commit(ctx, q, want)
	if err != nil {
		return GrantResult{}, err
	}
	res := grantResult(op)
	res.Deduplicated = replayed
	return res, nil
}

// Debit is DebitTx in a transaction of its own.
func Debit(ctx context.Context, db *store.DB, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (DebitResult, error) { return DebitTx(ctx, tx, s, in, now) })
}

// DebitTx draws amount from the customer's grants at now and emits
// credit.debited, in tx. Without allowNegative it covers what the balance
// allows and reports the rest as shortfall; with it the whole amount is
// covered and the balance may go below zero. Returns customer_required,
// unknown_customer (400), no_credit_account (the customer was never
// granted credits) or invalid_request.
func DebitTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	res, err := debit(ctx, tx, s, in, now)
	if err != nil || res.Deduplicated {
		return res, err
	}
	if _, err = events.Emit(ctx, tx, s, events.CreditDebited, now, res.Wire()); err != nil {
		return res, err
	}
	return res, leaveBalanceChecks(ctx, tx, []balanceCheck{{s, res.CustomerID, res.Balance + res.Covered}})
}

func debit(ctx context.Context, q store.Querier, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	if err := in.Validate(); err != nil {
		return DebitResult{}, err
	}
	reason := reasonOr(in.Reason, DefaultDebitReason)
	acct, err := debitAccount(ctx, q, s, in.Customer)
	if err != nil {
		return DebitResult{}, err
	}
	want := operation{Kind: kindDebit, CustomerID: acct.CustomerID, Amount: in.Amount, Reason: reason, AllowNegative: in.AllowNegative, IdempotencyKey: in.IdempotencyKey}
	if op, ok, err := replay(ctx, q, s, want); ok || err != nil {
		return debitResult(op), err
	}
	l, err := loadLedger(ctx, q, s, acct, now)
	if err != nil {
		return DebitResult{}, err
	}
	covered, err := l.debit(in.Amount, in.AllowNegative)
	if err != nil {
		return DebitResult{}, err
	}
	want.Covered, want.Balance = covered, l.acct.Balance
	op, replayed, err := l.commit(ctx, q, want)
	if err != nil {
		return DebitResult{}, err
	}
	res := debitResult(op)
	res.Deduplicated = replayed
	return res, nil
}

// debitAccount locks the account of the customer a debit names. The usual
// case, a customer with an account named by one reference, takes one
// statement. An external id without an account is no_credit_account naming
// that id (nothing is created); a customer id is resolved to tell
// unknown_customer from no_credit_account.
func debitAccount(ctx context.Context, q store.Querier, s tenant.Scope, ref customers.Ref) (account, error) {
	var acct account
	var ok bool
	var err error
	switch {
	case ref.ID != nil && ref.ExternalID == nil:
		acct, ok, err = lockAccount(ctx, q, s, *ref.ID, false)
	case ref.ID == nil && ref.ExternalID != nil:
		acct, ok, err = lockAccountByExternalID(ctx, q, s, *ref.ExternalID)
	}
	if err != nil || ok {
		return acct, err
	}
	if ref.ID == nil && ref.ExternalID != nil {
		// A debit creates nothing, not even the customer: name the
		// external id as given, never a cus_ id an upsert would make up.
		ext := *ref.ExternalID
		if ext == "" || utf8.RuneCountInString(ext) > customers.MaxExternalIDLen {
			return account{}, apperr.Field("external_customer_id", "must be 1 to %d characters", customers.MaxExternalIDLen)
		}
		return account{}, errNoAccountExt(ext)
	}
	// ref names an id here, so nothing is created and no time is needed.
	c, _, err := customers.Resolve(ctx, q, s, ref, true, time.Time{})
	if err != nil {
		return account{}, err
	}
	if acct, ok, err = lockAccount(ctx, q, s, c.ID, false); err != nil || ok {
		return acct, err
	}
	return account{}, errNoAccount(c.ID)
}

func errNoAccount(customerID string) error {
	return apperr.New(apperr.NoCreditAccount, "customer %s has no credit account: grant credits first", customerID)
}

func errNoAccountExt(externalID string) error {
	return apperr.New(apperr.NoCreditAccount, "customer with external_customer_id %q has no credit account: grant credits first", externalID)
}

func grantResult(op operation) GrantResult {
	r := GrantResult{CustomerID: op.CustomerID, AccountID: op.AccountID, Granted: op.Amount, Balance: op.Balance, Deduplicated: true}
	if op.EntryID != nil {
		r.EntryID = *op.EntryID
	}
	return r
}

func debitResult(op operation) DebitResult {
	return DebitResult{
		CustomerID: op.CustomerID, AccountID: op.AccountID, Requested: op.Amount, Covered: op.Covered,
		Shortfall: op.Amount - op.Covered, Balance: op.Balance, Deduplicated: true,
	}
}

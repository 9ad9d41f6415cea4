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
// There is one way to apply grants and debits: a batch (batch_tx.go),
// which locks its accounts, reads their grants, applies its calls in
// arrival order in memory and writes everything back in a fixed number of
// statements. Grant, Debit, GrantTx and DebitTx apply a batch of one. The
// daemon's calls go through a Batcher (group commit, batch.go), which
// gathers concurrent calls into one batch, and applies a batch that cannot
// be applied as one call by call.
package credits

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
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
	if err := in.Validate(now); err != nil {
		return GrantResult{}, err
	}
	out := applyAlone(ctx, db, batchConfig{readAhead: defaultReadAhead}, grantItem(s, in, now))
	return out.grant, out.err
}

// GrantTx tops up the customer's balance at now, creating the credit
// account on the first grant (and the customer from an
// external_customer_id), and emits credit.granted, in tx. Debt left by
// allow_negative debits is repaid first. Returns customer_required,
// unknown_customer (400) or invalid_request (bad fields, an idempotency key
// reused with other parameters, or a balance that would overflow).
func GrantTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in GrantInput, now time.Time) (GrantResult, error) {
	if err := in.Validate(now); err != nil {
		return GrantResult{}, err
	}
	out := applyInTx(ctx, tx, grantItem(s, in, now))
	return out.grant, out.err
}

// Debit is DebitTx in a transaction of its own.
func Debit(ctx context.Context, db *store.DB, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	if err := in.Validate(); err != nil {
		return DebitResult{}, err
	}
	out := applyAlone(ctx, db, batchConfig{readAhead: defaultReadAhead}, debitItem(s, in, now))
	return out.debit, out.err
}

// DebitTx draws amount from the customer's grants at now and emits
// credit.debited, in tx. Without allowNegative it covers what the balance
// allows and reports the rest as shortfall; with it the whole amount is
// covered and the balance may go below zero. Returns customer_required,
// unknown_customer (400), no_credit_account (the customer was never
// granted credits) or invalid_request.
func DebitTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in DebitInput, now time.Time) (DebitResult, error) {
	if err := in.Validate(); err != nil {
		return DebitResult{}, err
	}
	out := applyInTx(ctx, tx, debitItem(s, in, now))
	return out.debit, out.err
}

// concurrentAttempts bounds how often a call alone is tried again after
// meeting a row another transaction wrote meanwhile. The statement that
// met it waited for that transaction to commit, so the next attempt sees
// the row (and replays, or takes the account that now exists): a second
// attempt is enough but for a new writer each time.
const concurrentAttempts = 3

// applyAlone applies one validated call as a batch of one in a
// transaction of its own.
func applyAlone(ctx context.Context, db *store.DB, cfg batchConfig, it *item) outcome {
	for attempt := 1; ; attempt++ {
		outs, err := applyTx(ctx, db, cfg, []*item{it})
		if err == nil {
			return outs[0]
		}
		if !errors.Is(err, errConcurrent) || attempt == concurrentAttempts {
			return outcome{err: err}
		}
	}
}

// applyInTx applies one validated call as a batch of one in the caller's
// transaction, under a savepoint, so that an attempt that met a concurrent
// row leaves nothing behind when it is tried again.
func applyInTx(ctx context.Context, tx *store.Tx, it *item) outcome {
	for attempt := 1; ; attempt++ {
		if _, err := tx.ExecContext(ctx, `SAVEPOINT credits_apply`); err != nil {
			return outcome{err: store.Translate(err)}
		}
		bt := newBatchTx(tx, batchConfig{readAhead: defaultReadAhead}, []*item{it})
		err := bt.run(ctx)
		undo := `RELEASE SAVEPOINT credits_apply`
		if err != nil {
			undo = `ROLLBACK TO SAVEPOINT credits_apply`
		}
		if _, uerr := tx.ExecContext(ctx, undo); uerr != nil && err == nil {
			err = uerr
		}
		if err == nil {
			return bt.outs[0]
		}
		if !errors.Is(err, errConcurrent) || attempt == concurrentAttempts {
			return outcome{err: store.Translate(err)}
		}
	}
}

func grantItem(s tenant.Scope, in GrantInput, now time.Time) *item {
	return &item{s: s, now: now, grant: &in, key: scopedKey(s, in.IdempotencyKey), cust: custOf(s, in.Customer)}
}

func debitItem(s tenant.Scope, in DebitInput, now time.Time) *item {
	return &item{s: s, now: now, debit: &in, key: scopedKey(s, in.IdempotencyKey), cust: custOf(s, in.Customer)}
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

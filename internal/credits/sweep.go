package credits

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// sweepBatch bounds how many accounts one sweep transaction locks, and so
// how long a request on one of them may wait for the sweep.
const sweepBatch = 25

// SweepExpired writes the expiry entry of every grant whose expiry is at or
// before now and that still has a remainder, across all merchants, and
// returns how many it wrote. Accounts are claimed with FOR UPDATE SKIP
// LOCKED, so several replicas may sweep at once without waiting on each
// other or on requests: an account busy with a grant or debit is skipped,
// and that request expires its grants itself. A unique index allows one
// expiry entry per grant, so nothing is written twice. Balances read before
// the sweep already leave expired remainders out; the sweep only makes the
// ledger say so.
//
// It finds the merchants with grants to expire by a read that locks
// nothing, then sweeps each on its own: a row lock never spans merchants.
func SweepExpired(ctx context.Context, db *store.DB, now time.Time) (int, error) {
	var scopes []struct {
		MerchantID string      `db:"merchant_id"`
		Mode       tenant.Mode `db:"mode"`
	}
	if err := db.SelectContext(ctx, &scopes, `SELECT DISTINCT merchant_id, mode FROM credit_grant_balances
		WHERE live AND expires_at IS NOT NULL AND expires_at <= $1`, now); err != nil {
		return 0, store.Translate(err)
	}
	total := 0
	for _, s := range scopes {
		n, err := sweep(ctx, db, tenant.Scope{MerchantID: s.MerchantID, Mode: s.Mode}, now)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// SweepScope is SweepExpired for one merchant and mode (a test clock's
// advance expires its grants at the clock's new time).
func SweepScope(ctx context.Context, db *store.DB, s tenant.Scope, now time.Time) (int, error) {
	return sweep(ctx, db, s, now)
}

func sweep(ctx context.Context, db *store.DB, only tenant.Scope, now time.Time) (int, error) {
	total := 0
	for {
		n, accounts, err := sweepOnce(ctx, db, only, now)
		total += n
		if err != nil || accounts < sweepBatch {
			return total, err
		}
	}
}

// sweepOnce expires the due grants of up to sweepBatch accounts in one
// transaction; it returns the entries written and the accounts claimed.
func sweepOnce(ctx context.Context, db *store.DB, only tenant.Scope, now time.Time) (written, claimed int, err error) {
	err = db.InTx(ctx, func(tx *store.Tx) error {
		written, claimed = 0, 0
		var accts []struct {
			account
			Watched bool `db:"watched"`
		}
		if err := tx.SelectContext(ctx, &accts, `SELECT `+accountColumns+`, `+watchedColumn+` FROM credit_accounts a
			WHERE a.merchant_id = $3 AND a.mode = $4 AND a.id IN (SELECT b.account_id FROM credit_grant_balances b
				WHERE b.merchant_id = $3 AND b.mode = $4 AND b.live AND b.expires_at IS NOT NULL AND b.expires_at <= $1)
			LIMIT $2 FOR UPDATE OF a SKIP LOCKED`, now, sweepBatch, only.MerchantID, only.Mode); err != nil {
			return err
		}
		claimed = len(accts)
		ls := make([]*ledger, len(accts))
		for i, a := range accts {
			ls[i] = &ledger{s: tenant.Scope{MerchantID: a.MerchantID, Mode: a.Mode}, acct: a.account, now: now}
		}
		// The batch's read and write, with no operation: expiry entries
		// belong to none.
		bt := newBatchTx(tx, batchConfig{}, nil)
		if err := bt.readAll(ctx, ls); err != nil {
			return err
		}
		var w writes
		var checks []balanceCheck
		for i, l := range ls {
			l.expire(now)
			if len(l.entries) == 0 {
				continue
			}
			w.entries(l, l.entries, "", now)
			w.ledger(l, nil)
			written += len(l.entries)
			// An expiry lowers the balance as a debit does: a balance
			// alert on the account gets its check, with the balance
			// before, in this transaction; an unwatched account none.
			if accts[i].Watched {
				checks = append(checks, balanceCheck{l.s, l.acct.CustomerID, accts[i].Balance})
			}
		}
		if err := w.write(ctx, tx, only.MerchantID); err != nil {
			return err
		}
		return leaveBalanceChecks(ctx, tx, checks)
	})
	if err != nil {
		return 0, 0, err
	}
	return written, claimed, nil
}

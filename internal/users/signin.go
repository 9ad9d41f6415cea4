package users

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// The lockout: MaxFailures failed sign-ins for one email within
// FailureWindow lock that email for LockTime.
const (
	MaxFailures   = 10
	FailureWindow = 15 * time.Minute
	LockTime      = 15 * time.Minute
)

// maxCandidates bounds the users one sign-in checks a password against:
// the merchants one email is a user of.
const maxCandidates = 5

// SignInInput is what the sign-in form sends.
type SignInInput struct {
	Email    string
	Password string
	// TOTP is the authenticator code, needed when the user enrolled.
	TOTP string
	// MerchantID picks the merchant when the email and password are a
	// user's of several; empty otherwise.
	MerchantID string
}

// signInLockSpace is the first key of the advisory lock that serialises the
// lockout bookkeeping of one email.
const signInLockSpace = 0x7369676e // "sign"

// wrongCredentials is the one answer for an unknown email, a wrong
// password or a wrong code: a guesser learns nothing about which.
func wrongCredentials() error {
	return apperr.New(apperr.Unauthorized, "the email, password or authenticator code is not right")
}

// Locked reports whether err is SignIn's refusal of a locked email.
func Locked(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == apperr.RateLimited
}

// SignIn checks an email, password and (when enrolled) TOTP code and starts
// a session, returning it with its token (shown to the browser once). Every
// attempt counts against the email's lockout while it runs, so parallel
// guesses get no more than MaxFailures tries; a success does not count. A
// failure is unauthorized (the same message whatever was wrong), a locked
// email rate_limited, an email and password that are a user's of several
// merchants invalid_request naming `merchant` until in.MerchantID picks
// one. Successes and failures are written to the audit log: under the
// user's merchant, or under none for an email that is no user's.
func SignIn(ctx context.Context, db *store.DB, ip string, in SignInInput, now time.Time) (Started, error) {
	key := emailKey(in.Email)
	if key == "" {
		return Started{}, wrongCredentials()
	}
	attempt, err := startAttempt(ctx, db, key, now)
	if err != nil {
		if Locked(err) {
			_ = audit.Record(ctx, db, audit.Actor{User: "-", IP: ip}, audit.Entry{Action: ActionSignInFailed, Detail: key + ": locked"})
		}
		return Started{}, err
	}
	type candidate struct {
		User
		Hash       string `db:"password_hash"`
		TOTPSecret []byte `db:"totp_secret"`
		TOTPLast   *int64 `db:"totp_last_step"`
	}
	var cs []candidate
	if err := db.SelectContext(ctx, &cs, `SELECT `+userColumns+`, password_hash, totp_secret, totp_last_step FROM dashboard_users
		WHERE lower(email) = $1 AND password_hash IS NOT NULL AND disabled_at IS NULL AND ($2 = '' OR merchant_id = $2)
		ORDER BY created_at, id LIMIT $3`, key, in.MerchantID, maxCandidates); err != nil {
		return Started{}, store.Translate(err)
	}
	var match []candidate
	for _, c := range cs {
		if checkPassword(c.Hash, in.Password) {
			match = append(match, c)
		}
	}
	if len(cs) == 0 {
		checkPassword(decoyHash, in.Password)
	}
	fail := func(merchantID, userID, why string) (Started, error) {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := failAttempt(ctx, tx, key, now); err != nil {
				return err
			}
			return audit.Record(ctx, tx, audit.Actor{User: orDash(userID), IP: ip},
				audit.Entry{MerchantID: merchantID, Action: ActionSignInFailed, Target: userID, Detail: key + ": " + why})
		})
		if err != nil {
			return Started{}, err
		}
		return Started{}, wrongCredentials()
	}
	switch {
	case len(match) == 0 && len(cs) > 0:
		return fail(cs[0].MerchantID, cs[0].ID, "wrong password")
	case len(match) == 0:
		return fail("", "", "no such user")
	case len(match) > 1:
		_ = dropAttempt(ctx, db, key, attempt)
		ids := make([]string, len(match))
		for i, m := range match {
			ids[i] = m.MerchantID
		}
		return Started{}, apperr.Field("merchant", "this email is a user of several merchants (%v): choose one", ids)
	}
	u := match[0]
	var step *int64
	if u.TOTPSecret != nil {
		s, ok := matchTOTP(u.TOTPSecret, in.TOTP, now, u.TOTPLast)
		if !ok {
			return fail(u.MerchantID, u.ID, "wrong authenticator code")
		}
		step = &s
	}
	var started Started
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if step != nil {
			// Recording the step makes the code single-use; a concurrent
			// sign-in with the same code finds it taken.
			res, err := tx.ExecContext(ctx, `UPDATE dashboard_users SET totp_last_step = $3
				WHERE merchant_id = $1 AND id = $2 AND (totp_last_step IS NULL OR totp_last_step < $3)`, u.MerchantID, u.ID, *step)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return wrongCredentials()
			}
		}
		if err := dropAttempt(ctx, tx, key, attempt); err != nil {
			return err
		}
		var err error
		if started, err = startSession(ctx, tx, u.User, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Actor{User: u.ID, IP: ip}, audit.Entry{MerchantID: u.MerchantID, Action: ActionSignIn, Target: u.ID})
	})
	return started, err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// startAttempt refuses a locked email (rate_limited), and otherwise records
// the attempt as a failure until it succeeds: with the in-flight ones
// counted, MaxFailures attempts at once are all an attacker gets.
func startAttempt(ctx context.Context, db *store.DB, key string, now time.Time) (string, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1::int, hashtext($2))`, signInLockSpace, key); err != nil {
			return "", err
		}
		var until []time.Time
		if err := tx.SelectContext(ctx, &until, `SELECT locked_until FROM dashboard_sign_in_locks WHERE email_key = $1 AND locked_until > $2`, key, now); err != nil {
			return "", err
		}
		if len(until) > 0 {
			return "", lockedUntil(until[0])
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sign_in_failures WHERE email_key = $1 AND failed_at <= $2`, key, now.Add(-FailureWindow)); err != nil {
			return "", err
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM dashboard_sign_in_failures WHERE email_key = $1`, key); err != nil {
			return "", err
		}
		if n >= MaxFailures {
			// In-flight attempts fill the budget; they lock the email if
			// they fail.
			return "", lockedUntil(now.Add(LockTime))
		}
		attempt := id.New("sia")
		_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_sign_in_failures (email_key, id, failed_at) VALUES ($1, $2, $3)`, key, attempt, now)
		return attempt, err
	})
}

// failAttempt makes the attempt a failure for good, locking the email when
// it is the MaxFailures-th within the window.
func failAttempt(ctx context.Context, tx *store.Tx, key string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1::int, hashtext($2))`, signInLockSpace, key); err != nil {
		return err
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM dashboard_sign_in_failures WHERE email_key = $1 AND failed_at > $2`,
		key, now.Add(-FailureWindow)); err != nil {
		return err
	}
	if n < MaxFailures {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_sign_in_locks (email_key, locked_until) VALUES ($1, $2)
		ON CONFLICT (email_key) DO UPDATE SET locked_until = greatest(dashboard_sign_in_locks.locked_until, excluded.locked_until)`,
		key, now.Add(LockTime))
	return err
}

// dropAttempt forgets an attempt that did not fail.
func dropAttempt(ctx context.Context, q store.Querier, key, attempt string) error {
	_, err := q.ExecContext(ctx, `DELETE FROM dashboard_sign_in_failures WHERE email_key = $1 AND id = $2`, key, attempt)
	return store.Translate(err)
}

func lockedUntil(t time.Time) error {
	return apperr.New(apperr.RateLimited, "too many failed sign-ins for this email: it is locked until %s UTC", t.UTC().Format("15:04"))
}

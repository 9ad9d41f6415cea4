package users

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
)

// badSetupLink is the one answer for a setup link that is unknown, used,
// expired or whose user is disabled: a guesser learns nothing.
func badSetupLink() error {
	return apperr.New(apperr.ResourceNotFound, "this setup link is not valid: it was used already, has expired (links work for 24 hours) or never existed; ask for a new one")
}

// SetupUser returns the user a setup link is for, while the link is usable
// at now, without using it (the page that asks for the password).
func SetupUser(ctx context.Context, q store.Querier, token string, now time.Time) (User, error) {
	var us []User
	err := q.SelectContext(ctx, &us, `SELECT u.merchant_id, u.id, u.email, u.password_hash IS NOT NULL AS password_set,
		u.totp_secret IS NOT NULL AS totp_enrolled, u.created_at, u.disabled_at
		FROM dashboard_setup_tokens t JOIN dashboard_users u ON u.merchant_id = t.merchant_id AND u.id = t.user_id
		WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2 AND u.disabled_at IS NULL`, hashToken(token), now)
	if err != nil {
		return User{}, store.Translate(err)
	}
	if len(us) != 1 {
		return User{}, badSetupLink()
	}
	return us[0], nil
}

// checkPasswordRules is the password policy: at least MinPassword
// characters of valid UTF-8.
func checkPasswordRules(password string) error {
	switch n := utf8.RuneCountInString(password); {
	case !utf8.ValidString(password):
		return apperr.Field("password", "must be valid text")
	case n < MinPassword:
		return apperr.Field("password", "must be at least %d characters", MinPassword)
	case n > maxPassword:
		return apperr.Field("password", "must be at most %d characters", maxPassword)
	}
	return nil
}

// CompleteSetup uses a setup link: it sets the user's password and marks
// the link used, so it never works again. a.User is ignored: the actor is
// the link's user. It fails with invalid_request naming `password` (shorter
// than MinPassword) — the link stays usable then — and resource_not_found
// for a link that is not usable.
func CompleteSetup(ctx context.Context, db *store.DB, a audit.Actor, token, password string, now time.Time) (User, error) {
	if err := checkPasswordRules(password); err != nil {
		return User{}, err
	}
	hash := hashPassword(password) // before the transaction: it takes a while
	return store.InTx(ctx, db, func(tx *store.Tx) (User, error) {
		var used []struct {
			MerchantID string `db:"merchant_id"`
			UserID     string `db:"user_id"`
		}
		// Marking it used is the check: of two uses racing, one updates
		// the row and the other finds it used.
		if err := tx.SelectContext(ctx, &used, `UPDATE dashboard_setup_tokens SET used_at = $2
			WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING merchant_id, user_id`, hashToken(token), now); err != nil {
			return User{}, err
		}
		if len(used) != 1 {
			return User{}, badSetupLink()
		}
		var us []User
		if err := tx.SelectContext(ctx, &us, `UPDATE dashboard_users SET password_hash = $3
			WHERE merchant_id = $1 AND id = $2 AND disabled_at IS NULL RETURNING `+userColumns,
			used[0].MerchantID, used[0].UserID, hash); err != nil {
			return User{}, err
		}
		if len(us) != 1 {
			return User{}, badSetupLink()
		}
		u := us[0]
		return u, audit.Record(ctx, tx, audit.Actor{User: u.ID, IP: a.IP}, audit.Entry{MerchantID: u.MerchantID, Action: ActionSetup, Target: u.ID})
	})
}

// Package users owns the merchant dashboard's users: their creation with a
// single-use setup link, passwords (argon2id), optional TOTP, sign-in with a
// lockout, sessions and sign-out, and disabling. Every change is written to
// the audit log in its own transaction. Setup links and session tokens are
// 256-bit random strings of which only a SHA-256 hash is stored.
package users

import (
	"context"
	"crypto/sha256"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// SetupTTL is how long a setup link works.
const SetupTTL = 24 * time.Hour

// MinPassword is the shortest password accepted, in characters.
const MinPassword = 12

// maxPassword bounds what is hashed.
const maxPassword = 1000

// tokenChars random base62 characters carry 256 bits.
const tokenChars = 43

// The audit log's actions for users.
const (
	ActionCreate       = "user.create"
	ActionSetup        = "user.setup"
	ActionDisable      = "user.disable"
	ActionSignIn       = "user.sign_in"
	ActionSignInFailed = "user.sign_in_failed"
	ActionSignOut      = "user.sign_out"
	ActionTOTPEnrol    = "user.totp_enrol"
)

// User is a dashboard user's record (never its password or TOTP secret).
type User struct {
	MerchantID   string     `db:"merchant_id" json:"merchant_id"`
	ID           string     `db:"id" json:"id"`
	Email        string     `db:"email" json:"email"`
	PasswordSet  bool       `db:"password_set" json:"password_set"`
	TOTPEnrolled bool       `db:"totp_enrolled" json:"totp_enrolled"`
	CreatedAt    time.Time  `db:"created_at" json:"created_at"`
	DisabledAt   *time.Time `db:"disabled_at" json:"disabled_at"`
}

const userColumns = `merchant_id, id, email, password_hash IS NOT NULL AS password_set,
	totp_secret IS NOT NULL AS totp_enrolled, created_at, disabled_at`

// Created is a new user with its setup link's token, shown once.
type Created struct {
	User           User
	SetupToken     string
	SetupExpiresAt time.Time
}

// hashToken is the stored form of a setup or session token.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// normalEmail checks an email address and returns it trimmed.
func normalEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" || utf8.RuneCountInString(email) > 254 || !strings.Contains(email, "@") {
		return "", apperr.Field("email", "must be an email address such as ops@example.com")
	}
	return email, nil
}

// emailKey is the case-insensitive form an email is matched by.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Create makes a user of merchantID with email (unique per merchant, case
// insensitively) and a setup link valid for SetupTTL from now, recording
// the change made by a. It fails with invalid_request naming `merchant`
// (no such merchant) or `email` (malformed, or already a user of the
// merchant).
func Create(ctx context.Context, db *store.DB, a audit.Actor, merchantID, email string, now time.Time) (Created, error) {
	email, err := normalEmail(email)
	if err != nil {
		return Created{}, err
	}
	return store.InTx(ctx, db, func(tx *store.Tx) (Created, error) {
		ok, err := auth.MerchantExists(ctx, tx, merchantID)
		if err != nil {
			return Created{}, err
		}
		if !ok {
			return Created{}, apperr.Field("merchant", "no merchant %q", merchantID)
		}
		var taken bool
		if err := tx.GetContext(ctx, &taken, `SELECT EXISTS (SELECT 1 FROM dashboard_users WHERE merchant_id = $1 AND lower(email) = lower($2))`,
			merchantID, email); err != nil {
			return Created{}, err
		}
		if taken {
			return Created{}, apperr.Field("email", "%s is already a user of merchant %s", email, merchantID)
		}
		var c Created
		if err := tx.GetContext(ctx, &c.User, `INSERT INTO dashboard_users (merchant_id, id, email, created_at) VALUES ($1, $2, $3, $4)
			RETURNING `+userColumns, merchantID, id.New("usr"), email, now); err != nil {
			return Created{}, err
		}
		c.SetupToken, c.SetupExpiresAt = id.Random(tokenChars), now.Add(SetupTTL)
		if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_setup_tokens (token_hash, merchant_id, user_id, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5)`, hashToken(c.SetupToken), merchantID, c.User.ID, now, c.SetupExpiresAt); err != nil {
			return Created{}, err
		}
		return c, audit.Record(ctx, tx, a, audit.Entry{MerchantID: merchantID, Action: ActionCreate, Target: c.User.ID, Detail: email})
	})
}

// List returns a merchant's users (every merchant's when merchantID is
// empty), oldest first.
func List(ctx context.Context, q store.Querier, merchantID string) ([]User, error) {
	us := []User{}
	err := q.SelectContext(ctx, &us, `SELECT `+userColumns+` FROM dashboard_users
		WHERE $1 = '' OR merchant_id = $1 ORDER BY created_at, id`, merchantID)
	return us, store.Translate(err)
}

// Disable disables user userID (of merchantID; of whichever merchant has
// it when merchantID is empty, for the admin command) and ends its
// sessions in the same transaction, so a signed-in browser is refused on
// its next request. Disabling twice is harmless. An unknown user is
// invalid_request naming `user`.
func Disable(ctx context.Context, db *store.DB, a audit.Actor, merchantID, userID string, now time.Time) (User, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (User, error) {
		var us []User
		if err := tx.SelectContext(ctx, &us, `UPDATE dashboard_users SET disabled_at = coalesce(disabled_at, $3)
			WHERE ($1 = '' OR merchant_id = $1) AND id = $2 RETURNING `+userColumns, merchantID, userID, now); err != nil {
			return User{}, err
		}
		if len(us) != 1 {
			return User{}, apperr.Field("user", "no user %q", userID)
		}
		u := us[0]
		if _, err := tx.ExecContext(ctx, `UPDATE dashboard_sessions SET ended_at = $3
			WHERE merchant_id = $1 AND user_id = $2 AND ended_at IS NULL`, u.MerchantID, u.ID, now); err != nil {
			return User{}, err
		}
		return u, audit.Record(ctx, tx, a, audit.Entry{MerchantID: u.MerchantID, Action: ActionDisable, Target: u.ID, Detail: u.Email})
	})
}

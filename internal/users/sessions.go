package users

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A session ends after SessionIdle without a request, SessionMax after it
// started, at sign-out, and when its user is disabled.
const (
	SessionIdle = 12 * time.Hour
	SessionMax  = 7 * 24 * time.Hour
)

// Session is a signed-in browser: one user of one merchant, looking at one
// mode.
type Session struct {
	MerchantID   string      `db:"merchant_id"`
	UserID       string      `db:"user_id"`
	Email        string      `db:"email"`
	Mode         tenant.Mode `db:"mode"`
	TOTPEnrolled bool        `db:"totp_enrolled"`
	CreatedAt    time.Time   `db:"created_at"`
	LastSeenAt   time.Time   `db:"last_seen_at"`
}

// Scope is the merchant and mode the session looks at.
func (s Session) Scope() tenant.Scope { return tenant.Scope{MerchantID: s.MerchantID, Mode: s.Mode} }

// Actor is the session's user at ip, for the audit log.
func (s Session) Actor(ip string) audit.Actor { return audit.Actor{User: s.UserID, IP: ip} }

// Started is a new session and its token, which only the browser keeps.
type Started struct {
	Session
	Token string
}

// startSession makes a fresh session for u: a new token at every sign-in,
// so no token set before it (session fixation) is ever signed in.
func startSession(ctx context.Context, tx *store.Tx, u User, now time.Time) (Started, error) {
	token := id.Random(tokenChars)
	if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_sessions (token_hash, merchant_id, user_id, created_at, last_seen_at)
		VALUES ($1, $2, $3, $4, $4)`, hashToken(token), u.MerchantID, u.ID, now); err != nil {
		return Started{}, err
	}
	return Started{Session: Session{MerchantID: u.MerchantID, UserID: u.ID, Email: u.Email, Mode: tenant.Test,
		TOTPEnrolled: u.TOTPEnrolled, CreatedAt: now, LastSeenAt: now}, Token: token}, nil
}

// noSession is the answer for a token that is unknown, ended or expired,
// or whose user is disabled.
func noSession() error {
	return apperr.New(apperr.Unauthorized, "not signed in, or the session has ended: sign in again")
}

// Authenticate returns the live session of token at now and marks it seen
// (its idle time starts again), in one statement: a session whose user was
// disabled, or that ended, is refused on the very next request.
func Authenticate(ctx context.Context, q store.Querier, token string, now time.Time) (Session, error) {
	if token == "" {
		return Session{}, noSession()
	}
	var ss []Session
	err := q.SelectContext(ctx, &ss, `UPDATE dashboard_sessions s SET last_seen_at = $2
		FROM dashboard_users u
		WHERE s.token_hash = $1 AND u.merchant_id = s.merchant_id AND u.id = s.user_id
		  AND s.ended_at IS NULL AND u.disabled_at IS NULL
		  AND s.last_seen_at > $3 AND s.created_at > $4
		RETURNING s.merchant_id, s.user_id, u.email, s.mode, u.totp_secret IS NOT NULL AS totp_enrolled, s.created_at, s.last_seen_at`,
		hashToken(token), now, now.Add(-SessionIdle), now.Add(-SessionMax))
	if err != nil {
		return Session{}, store.Translate(err)
	}
	if len(ss) != 1 {
		return Session{}, noSession()
	}
	return ss[0], nil
}

// SignOut ends the session of token. Ending an ended session is harmless.
func SignOut(ctx context.Context, db *store.DB, ip, token string, now time.Time) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		var ended []Session
		if err := tx.SelectContext(ctx, &ended, `UPDATE dashboard_sessions SET ended_at = $2
			WHERE token_hash = $1 AND ended_at IS NULL RETURNING merchant_id, user_id`, hashToken(token), now); err != nil {
			return err
		}
		if len(ended) == 0 {
			return nil
		}
		s := ended[0]
		return audit.Record(ctx, tx, s.Actor(ip), audit.Entry{MerchantID: s.MerchantID, Action: ActionSignOut, Target: s.UserID})
	})
}

// SetMode switches the session of token to mode (the test/live switch).
func SetMode(ctx context.Context, q store.Querier, token string, mode tenant.Mode) error {
	if !mode.Valid() {
		return apperr.Field("mode", "must be test or live")
	}
	_, err := q.ExecContext(ctx, `UPDATE dashboard_sessions SET mode = $2 WHERE token_hash = $1 AND ended_at IS NULL`, hashToken(token), mode)
	return store.Translate(err)
}

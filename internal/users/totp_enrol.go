package users

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
)

// totpIssuer names the service in authenticator apps.
const totpIssuer = "tollgate"

// BeginTOTP gives the session's user a new pending TOTP secret and returns
// it to enter into an authenticator app. It counts only once ConfirmTOTP
// sees a code from it; until then sign-in does not ask for codes.
func BeginTOTP(ctx context.Context, q store.Querier, s Session) (TOTPEnrolment, error) {
	secret := newTOTPSecret()
	res, err := q.ExecContext(ctx, `UPDATE dashboard_users SET totp_pending = $3
		WHERE merchant_id = $1 AND id = $2 AND disabled_at IS NULL`, s.MerchantID, s.UserID, secret)
	if err != nil {
		return TOTPEnrolment{}, store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return TOTPEnrolment{}, noSession()
	}
	return enrolment(secret, totpIssuer, s.Email), nil
}

// ConfirmTOTP enrols the pending secret when code is its current code:
// from then on, sign-in asks for a code. A wrong code is invalid_request
// naming `code`.
func ConfirmTOTP(ctx context.Context, db *store.DB, s Session, ip, code string, now time.Time) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		var pending []byte
		if err := tx.GetContext(ctx, &pending, `SELECT coalesce(totp_pending, '') FROM dashboard_users
			WHERE merchant_id = $1 AND id = $2 AND disabled_at IS NULL FOR UPDATE`, s.MerchantID, s.UserID); err != nil {
			if store.NotFound(err) {
				return noSession()
			}
			return err
		}
		if len(pending) == 0 {
			return apperr.Field("code", "start the enrolment again: there is no pending authenticator secret")
		}
		step, ok := matchTOTP(pending, code, now, nil)
		if !ok {
			return apperr.Field("code", "is not the authenticator's current code for the new secret")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE dashboard_users SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = $3
			WHERE merchant_id = $1 AND id = $2`, s.MerchantID, s.UserID, step); err != nil {
			return err
		}
		return audit.Record(ctx, tx, s.Actor(ip), audit.Entry{MerchantID: s.MerchantID, Action: ActionTOTPEnrol, Target: s.UserID})
	})
}

package wallet

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Set makes address the settlement wallet of s, verifying signature with
// ECDSA (externally owned accounts); see SetWith.
func Set(ctx context.Context, db *store.DB, s tenant.Scope, address, signature string, now time.Time) (Wallet, error) {
	return SetWith(ctx, db, ECDSA{}, s, address, signature, now)
}

// SetWith makes address the settlement wallet of s when signature, checked
// by v, is address's EIP-191 signature over the message of the newest
// challenge issued for s and address, and that challenge is unexpired and
// unused. The signature is checked before any lock is taken (a contract
// wallet's check is an eth_call); then, in one transaction, the challenge
// is marked used (so the signature cannot be replayed), the previous wallet
// marked replaced and the new one recorded. It returns the new wallet with
// the ones it replaced.
//
// It fails with invalid_request: naming `mode`, `address` (see
// ParseAddress) or `signature` (malformed, or not address's signature over
// the challenge: see ECDSA.Verify); and without a field when there is no
// challenge, or the newest one expired or was used. v's other errors are
// returned as they are; the rest come from the database.
func SetWith(ctx context.Context, db *store.DB, v Verifier, s tenant.Scope, address, signature string, now time.Time) (Wallet, error) {
	if !s.Mode.Valid() {
		return Wallet{}, apperr.Field("mode", "must be test or live")
	}
	addr, err := ParseAddress(address)
	if err != nil {
		return Wallet{}, err
	}
	sig, err := ParseSignature(signature)
	if err != nil {
		return Wallet{}, err
	}
	c, err := newestUsable(ctx, db, s, addr, now, "")
	if err != nil {
		return Wallet{}, store.Translate(err)
	}
	digest := common.BytesToHash(accounts.TextHash([]byte(c.Message)))
	if err := v.Verify(ctx, addr, digest, sig); err != nil {
		return Wallet{}, explainMismatch(err, c.Message, addr, digest, sig)
	}
	return store.InTx(ctx, db, func(tx *store.Tx) (Wallet, error) {
		// Two changes to one scope's wallet at once would both replace the
		// same current row; the lock makes the second wait and see the
		// first, and the challenge is checked again under it.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1::int, hashtext($2))`,
			walletLockSpace, s.MerchantID+"/"+string(s.Mode)); err != nil {
			return Wallet{}, err
		}
		if _, err := newestUsable(ctx, tx, s, addr, now, c.ID); err != nil {
			return Wallet{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE wallet_challenges SET used_at = $3 WHERE merchant_id = $1 AND id = $2`,
			s.MerchantID, c.ID, now); err != nil {
			return Wallet{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE settlement_wallets SET replaced_at = $3
			WHERE merchant_id = $1 AND mode = $2 AND replaced_at IS NULL`, s.MerchantID, s.Mode, now); err != nil {
			return Wallet{}, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO settlement_wallets (merchant_id, mode, id, address, challenge_id, signature, verified_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, s.MerchantID, s.Mode, id.New("wal"), addr.Hex(), c.ID, sig, now); err != nil {
			return Wallet{}, err
		}
		w, _, err := Get(ctx, tx, s)
		return w, err
	})
}

// walletLockSpace is the first key of the advisory lock that serialises
// changes to one merchant's wallet in one mode.
const walletLockSpace = 0x77616c6c // "wall"

// newestUsable returns the newest challenge for s and addr when it is
// unused and unexpired at now (and, when want is not empty, is the
// challenge want), and invalid_request saying what is wrong otherwise.
func newestUsable(ctx context.Context, q store.Querier, s tenant.Scope, addr common.Address, now time.Time, want string) (Challenge, error) {
	var cs []Challenge
	err := q.SelectContext(ctx, &cs, `SELECT `+challengeColumns+` FROM wallet_challenges
		WHERE merchant_id = $1 AND mode = $2 AND address = $3
		ORDER BY issued_at DESC, seq DESC LIMIT 1`, s.MerchantID, s.Mode, addr.Hex())
	if err != nil {
		return Challenge{}, err
	}
	if len(cs) == 0 {
		return Challenge{}, apperr.New(apperr.InvalidRequest,
			"no challenge for %s in %s mode of merchant %s; run tollgate admin wallet challenge first and sign its message", addr.Hex(), s.Mode, s.MerchantID)
	}
	c := cs[0]
	switch {
	case c.UsedAt != nil:
		return Challenge{}, apperr.New(apperr.InvalidRequest,
			"the newest challenge for %s was already used at %s; challenges are single-use: run tollgate admin wallet challenge for a new one", addr.Hex(), c.UsedAt.UTC().Format(time.RFC3339))
	case !now.Before(c.ExpiresAt):
		return Challenge{}, apperr.New(apperr.InvalidRequest,
			"the newest challenge for %s expired at %s (challenges are valid %s); run tollgate admin wallet challenge for a new one", addr.Hex(), c.ExpiresAt.UTC().Format(time.RFC3339), ChallengeTTL)
	case want != "" && c.ID != want:
		return Challenge{}, apperr.New(apperr.InvalidRequest,
			"a newer challenge for %s was issued while the signature was checked; sign the newest challenge's message", addr.Hex())
	}
	return c, nil
}

// explainMismatch turns a signature that is well formed but not addr's
// over the message into what went wrong. The address it recovers to says
// nothing useful (any other bytes signed by the right wallet recover to a
// stranger), so the error names the message's exact length instead, and
// recognises the usual slip: the message signed with a line ending added
// (a file saved by an editor, echo).
func explainMismatch(err error, message string, addr common.Address, digest common.Hash, sig []byte) error {
	if apperr.CodeOf(err) != apperr.InvalidRequest {
		return err
	}
	if got, rerr := Recover(digest, sig); rerr != nil || got == addr {
		return err // malformed, or a contract wallet's own refusal: already explained
	}
	for _, ending := range []string{"\n", "\r\n"} {
		if got, rerr := Recover(common.BytesToHash(accounts.TextHash([]byte(message+ending))), sig); rerr == nil && got == addr {
			return apperr.Field("signature", "is over the newest challenge's message with a line ending added (%d bytes): sign exactly the %d bytes of the message, with no trailing newline",
				len(message)+len(ending), len(message))
		}
	}
	return apperr.Field("signature", "is not %s's signature over the newest challenge's message: the signed bytes must be exactly that message, %d bytes as tollgate admin wallet challenge prints it (no trailing newline), signed with that wallet (personal_sign)",
		addr.Hex(), len(message))
}

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
// unused. In one transaction it marks the challenge used (so the signature
// cannot be replayed), marks the previous wallet replaced and records the
// new one. It returns the new wallet with the ones it replaced.
//
// It fails with invalid_request: naming `mode`, `address` (see
// ParseAddress) or `signature` (malformed, or not address's signature over
// the challenge: see ECDSA.Verify); and without a field when there is no
// challenge, or the newest one expired or was used. Errors other than
// *apperr.Error come from the database or from v.
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
	return store.InTx(ctx, db, func(tx *store.Tx) (Wallet, error) {
		return SetTx(ctx, tx, v, s, addr, sig, now)
	})
}

// walletLockSpace is the first key of the advisory lock that serialises
// changes to one merchant's wallet in one mode.
const walletLockSpace = 0x77616c6c // "wall"

// SetTx is SetWith inside the caller's transaction, with the address and
// signature already parsed. Verification runs inside the transaction, which
// holds the scope's wallet lock meanwhile; a Verifier that calls a node
// should bound its own time.
func SetTx(ctx context.Context, tx *store.Tx, v Verifier, s tenant.Scope, addr common.Address, sig []byte, now time.Time) (Wallet, error) {
	if !s.Mode.Valid() {
		return Wallet{}, apperr.Field("mode", "must be test or live")
	}
	// Two changes to one scope's wallet at once would both replace the
	// same current row; the lock makes the second wait and see the first.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1::int, hashtext($2))`,
		walletLockSpace, s.MerchantID+"/"+string(s.Mode)); err != nil {
		return Wallet{}, err
	}
	var cs []Challenge
	err := tx.SelectContext(ctx, &cs, `SELECT `+challengeColumns+` FROM wallet_challenges
		WHERE merchant_id = $1 AND mode = $2 AND address = $3
		ORDER BY issued_at DESC, seq DESC LIMIT 1 FOR UPDATE`, s.MerchantID, s.Mode, addr.Hex())
	if err != nil {
		return Wallet{}, err
	}
	if len(cs) == 0 {
		return Wallet{}, apperr.New(apperr.InvalidRequest,
			"no challenge for %s in %s mode of merchant %s; run tollgate admin wallet challenge first and sign its message", addr.Hex(), s.Mode, s.MerchantID)
	}
	c := cs[0]
	switch {
	case c.UsedAt != nil:
		return Wallet{}, apperr.New(apperr.InvalidRequest,
			"the newest challenge for %s was already used at %s; challenges are single-use: run tollgate admin wallet challenge for a new one", addr.Hex(), c.UsedAt.UTC().Format(time.RFC3339))
	case !now.Before(c.ExpiresAt):
		return Wallet{}, apperr.New(apperr.InvalidRequest,
			"the newest challenge for %s expired at %s (challenges are valid %s); run tollgate admin wallet challenge for a new one", addr.Hex(), c.ExpiresAt.UTC().Format(time.RFC3339), ChallengeTTL)
	}
	if err := v.Verify(ctx, addr, common.BytesToHash(accounts.TextHash([]byte(c.Message))), sig); err != nil {
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
}

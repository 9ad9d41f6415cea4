package wallet

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// ChallengeTTL is how long a challenge can be signed and used.
const ChallengeTTL = 10 * time.Minute

// ServiceName names the service in the message, so a wallet owner sees who
// asks for the signature.
const ServiceName = "tollgate"

// Challenge is a message the wallet signs (EIP-191 personal_sign) to become
// a merchant's settlement wallet in one mode.
type Challenge struct {
	MerchantID string      `db:"merchant_id"`
	Mode       tenant.Mode `db:"mode"`
	ID         string      `db:"id"`
	Address    string      `db:"address"`
	// Message is the exact text to sign; Set verifies the signature over
	// the stored copy, never a re-rendering.
	Message   string     `db:"message"`
	IssuedAt  time.Time  `db:"issued_at"`
	ExpiresAt time.Time  `db:"expires_at"`
	UsedAt    *time.Time `db:"used_at"`
}

const challengeColumns = `merchant_id, mode, id, address, message, issued_at, expires_at, used_at`

// NewChallenge issues a single-use challenge, valid ChallengeTTL from now,
// for making address the settlement wallet of s. Only the newest challenge
// for a merchant, mode and address counts: issuing one replaces the earlier
// ones. It returns the stored challenge. It fails with invalid_request
// naming `address` (not a 0x address, bad EIP-55 checksum, zero), `mode` or
// `merchant` (no such merchant).
func NewChallenge(ctx context.Context, q store.Querier, s tenant.Scope, address string, now time.Time) (Challenge, error) {
	if !s.Mode.Valid() {
		return Challenge{}, apperr.Field("mode", "must be test or live")
	}
	addr, err := ParseAddress(address)
	if err != nil {
		return Challenge{}, err
	}
	ok, err := auth.MerchantExists(ctx, q, s.MerchantID)
	if err != nil {
		return Challenge{}, err
	}
	if !ok {
		return Challenge{}, apperr.Field("merchant", "no merchant %q", s.MerchantID)
	}
	// Whole seconds: the times in the message are then exactly the stored
	// ones, so what the wallet owner reads is what is enforced.
	issued := now.UTC().Truncate(time.Second)
	c := Challenge{
		MerchantID: s.MerchantID, Mode: s.Mode, ID: id.New("wch"), Address: addr.Hex(),
		IssuedAt: issued, ExpiresAt: issued.Add(ChallengeTTL),
	}
	c.Message = message(c, id.Random(24))
	_, err = q.ExecContext(ctx, `INSERT INTO wallet_challenges (merchant_id, mode, id, address, message, issued_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.MerchantID, c.Mode, c.ID, c.Address, c.Message, c.IssuedAt, c.ExpiresAt)
	if err != nil {
		return Challenge{}, store.Translate(err)
	}
	return c, nil
}

// message renders what the wallet owner reads in their wallet before
// signing: who asks, for what, and until when. The layout follows the
// "Key: value" lines of Sign-In with Ethereum (EIP-4361), which wallets
// display legibly.
func message(c Challenge, nonce string) string {
	return fmt.Sprintf(`%s wants you to confirm a settlement wallet.

Sign to make this address the %s-mode settlement wallet of merchant %s: customers' payments to the merchant will be sent to it. Signing sends no transaction and costs nothing.

Service: %s
Merchant: %s
Mode: %s
Address: %s
Nonce: %s
Issued At: %s
Expiration Time: %s`,
		ServiceName, c.Mode, c.MerchantID, ServiceName, c.MerchantID, c.Mode, c.Address, nonce,
		c.IssuedAt.Format(time.RFC3339), c.ExpiresAt.Format(time.RFC3339))
}

// Wire returns the challenge's JSON form for `admin wallet challenge --json`.
func (c Challenge) Wire() wire.WalletChallenge {
	return wire.WalletChallenge{
		Object: "wallet_challenge", ID: c.ID, MerchantID: c.MerchantID, Mode: string(c.Mode), Address: c.Address,
		Message: c.Message, IssuedAt: wire.Timestamp(c.IssuedAt), ExpiresAt: wire.Timestamp(c.ExpiresAt), Livemode: c.Mode == tenant.Live,
	}
}

// Package wallet owns a merchant's settlement wallet: the address, per mode,
// that customers' payments go to. The address is never accepted over the
// API or by the tool server: the operator asks for a single-use challenge (Challenge),
// the wallet signs its message with EIP-191 personal_sign, and Set checks
// that signature before the wallet changes. Every wallet a merchant ever had
// is kept with its times. In test mode a merchant without a wallet settles
// to a generated test wallet (TestWallet); in live mode Payee refuses.
package wallet

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Wallet is a merchant's settlement wallet in one mode.
type Wallet struct {
	MerchantID string      `db:"merchant_id"`
	Mode       tenant.Mode `db:"mode"`
	ID         string      `db:"id"`
	// Address is EIP-55 checksummed.
	Address     string     `db:"address"`
	ChallengeID string     `db:"challenge_id"`
	VerifiedAt  time.Time  `db:"verified_at"`
	ReplacedAt  *time.Time `db:"replaced_at"`
	// Generated marks the test wallet a test-mode merchant without a wallet
	// on file settles to (TestWallet); it has no ID and no times.
	Generated bool `db:"-"`
	// Previous lists the wallets this one replaced, newest first (filled
	// by Get and Set).
	Previous []Wallet `db:"-"`
}

const columns = `merchant_id, mode, id, address, challenge_id, verified_at, replaced_at`

// testWalletDomain separates test-wallet preimages from any other use of
// keccak256 over a merchant id.
const testWalletDomain = "tollgate test wallet"

// TestWallet returns the address a test-mode merchant without a wallet on
// file settles to: the last 20 bytes of keccak256("tollgate test wallet" ‖
// merchant id). It is stable and valid, and no one holds its key: finding
// one would mean finding a secp256k1 key for a given hash, i.e. breaking
// keccak256 or 2^160 work, so test payments can never be spent by anyone.
func TestWallet(merchantID string) common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte(testWalletDomain), []byte(merchantID)))
}

// NoWallet is the error of live mode without a wallet on file
// (invalid_request), telling the operator what to run.
func NoWallet() error {
	return apperr.New(apperr.InvalidRequest, "no settlement wallet on file; set one with tollgate admin wallet set")
}

// Payee returns the EIP-55 address payments in s are paid to: the wallet on
// file, or in test mode without one the generated TestWallet. In live mode
// without a wallet it fails with invalid_request ("no settlement wallet on
// file; set one with tollgate admin wallet set"); with an invalid mode, with
// invalid_request naming `mode`.
func Payee(ctx context.Context, q store.Querier, s tenant.Scope) (string, error) {
	if !s.Mode.Valid() {
		return "", apperr.Field("mode", "must be test or live")
	}
	var addrs []string
	err := q.SelectContext(ctx, &addrs, `SELECT address FROM settlement_wallets
		WHERE merchant_id = $1 AND mode = $2 AND replaced_at IS NULL`, s.MerchantID, s.Mode)
	if err != nil {
		return "", store.Translate(err)
	}
	var onFile *string
	if len(addrs) > 0 {
		onFile = &addrs[0]
	}
	return PayeeOf(s, onFile)
}

// PayeeOf is Payee for a caller that read the address on file (nil for
// none) itself, with other things in one statement.
func PayeeOf(s tenant.Scope, onFile *string) (string, error) {
	switch {
	case onFile != nil:
		return *onFile, nil
	case s.Mode == tenant.Test:
		return TestWallet(s.MerchantID).Hex(), nil
	default:
		return "", NoWallet()
	}
}

// Get returns the wallet on file for s with the wallets it replaced, and
// true. Without one it returns false and, in test mode, the generated
// TestWallet (Generated set), in live mode a zero Wallet. It fails with
// invalid_request naming `mode` for an invalid mode.
func Get(ctx context.Context, q store.Querier, s tenant.Scope) (Wallet, bool, error) {
	if !s.Mode.Valid() {
		return Wallet{}, false, apperr.Field("mode", "must be test or live")
	}
	var ws []Wallet
	err := q.SelectContext(ctx, &ws, `SELECT `+columns+` FROM settlement_wallets
		WHERE merchant_id = $1 AND mode = $2 ORDER BY seq DESC`, s.MerchantID, s.Mode)
	if err != nil {
		return Wallet{}, false, store.Translate(err)
	}
	if len(ws) == 0 || ws[0].ReplacedAt != nil {
		if s.Mode == tenant.Test {
			return Wallet{MerchantID: s.MerchantID, Mode: s.Mode, Address: TestWallet(s.MerchantID).Hex(), Generated: true}, false, nil
		}
		return Wallet{}, false, nil
	}
	w := ws[0]
	w.Previous = ws[1:]
	return w, true, nil
}

// Wire returns the wallet's JSON form for `admin wallet show --json`.
func (w Wallet) Wire() wire.SettlementWallet {
	out := wire.SettlementWallet{
		Object: "settlement_wallet", MerchantID: w.MerchantID, Mode: string(w.Mode), Address: w.Address,
		Source: "verified", Livemode: w.Mode == tenant.Live, Previous: []wire.PreviousWallet{},
	}
	if w.Generated {
		out.Source = "generated"
	} else {
		out.VerifiedAt = wire.OptTimestamp(&w.VerifiedAt)
	}
	for _, p := range w.Previous {
		out.Previous = append(out.Previous, wire.PreviousWallet{
			Address: p.Address, VerifiedAt: wire.Timestamp(p.VerifiedAt), ReplacedAt: wire.OptTimestamp(p.ReplacedAt),
		})
	}
	return out
}

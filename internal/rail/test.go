package rail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Test is the deterministic test-mode rail. Its ledger is the
// rail_settlements table, written in transactions of its own (as an outside
// system's would be), so a caller's crash after the rail answered is
// recovered by asking again with the same key. What happens is decided by
// the payer (the magic wallets of DESIGN.md):
//
//   - WalletSucceeds: every operation succeeds;
//   - WalletInsufficient: every payment and charge fails (insufficient_funds);
//   - WalletRevokesAfter1st: the first payment or activation succeeds; the
//     authorization is revoked before the next charge (authorization_revoked);
//   - WalletFailsTwiceAfter1: the first succeeds, the next two charges of
//     the authorization fail, the third succeeds (and later ones);
//   - WalletTransientOnce: every operation settles, but the first answer for
//     each key is lost (ErrTransient): asking again returns the settlement,
//     never a second one.
//
// Refunds always succeed.
type Test struct {
	db *store.DB
}

// NewTest returns the test rail over db.
func NewTest(db *store.DB) *Test { return &Test{db: db} }

// Network is "test".
func (t *Test) Network() string { return "test" }

// Settle implements Rail. The requests are settled in one transaction: a
// key already settled answers its stored settlement; a new one is decided
// and stored.
func (t *Test) Settle(ctx context.Context, reqs []Request) ([]Settlement, error) {
	out := make([]Settlement, len(reqs))
	var lost bool
	err := t.db.InTx(ctx, func(tx *store.Tx) error {
		lost = false
		for i, r := range reqs {
			s, fresh, err := t.settle(ctx, tx, r)
			if err != nil {
				return err
			}
			out[i] = s
			lost = lost || (fresh && r.Payer == WalletTransientOnce && r.Kind != Refund)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if lost {
		return nil, fmt.Errorf("%w: the test rail lost its answer (wallet %s); ask again with the same key", ErrTransient, WalletTransientOnce)
	}
	return out, nil
}

const settlementColumns = `key, kind, nonce, payer, payee, amount, status, coalesce(reason, '') AS reason, tx_hash, settled_at`

type settlementRow struct {
	Key    string       `db:"key"`
	Kind   string       `db:"kind"`
	Nonce  string       `db:"nonce"`
	Payer  string       `db:"payer"`
	Payee  string       `db:"payee"`
	Amount money.Amount `db:"amount"`
	Status string       `db:"status"`
	Reason string       `db:"reason"`
	TxHash string       `db:"tx_hash"`
	At     time.Time    `db:"settled_at"`
}

func (r settlementRow) settlement() Settlement {
	return Settlement{Key: r.Key, Kind: r.Kind, Nonce: r.Nonce, Payer: r.Payer, Payee: r.Payee, Amount: r.Amount,
		Status: r.Status, Reason: r.Reason, TxHash: r.TxHash, At: r.At, Network: "test"}
}

// settle answers one request in tx; fresh is true when it was decided now.
func (t *Test) settle(ctx context.Context, tx *store.Tx, r Request) (Settlement, bool, error) {
	var rows []settlementRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+settlementColumns+` FROM rail_settlements WHERE merchant_id = $1 AND mode = $2 AND key = $3`,
		r.Scope.MerchantID, r.Scope.Mode, r.Key); err != nil {
		return Settlement{}, false, store.Translate(err)
	}
	if len(rows) == 1 {
		return rows[0].settlement(), false, nil
	}
	if r.Kind == Pay {
		// An invoice already paid answers its payment, whoever asks.
		if err := tx.SelectContext(ctx, &rows, `SELECT `+settlementColumns+` FROM rail_settlements
			WHERE merchant_id = $1 AND mode = $2 AND nonce = $3 AND kind = 'pay' AND status = 'succeeded'`,
			r.Scope.MerchantID, r.Scope.Mode, r.Nonce); err != nil {
			return Settlement{}, false, store.Translate(err)
		}
		if len(rows) == 1 {
			return rows[0].settlement(), false, nil
		}
	}
	status, reason, err := t.decide(ctx, tx, r)
	if err != nil {
		return Settlement{}, false, err
	}
	s := Settlement{Key: r.Key, Kind: r.Kind, Nonce: r.Nonce, Payer: r.Payer, Payee: r.Payee, Amount: r.Amount,
		Status: status, Reason: reason, TxHash: txHash(r.Scope, r.Key), At: r.At.Truncate(time.Microsecond), Network: "test"}
	var reasonArg *string
	if reason != "" {
		reasonArg = &reason
	}
	// A concurrent request for the same key or the same invoice may have
	// settled first; then its settlement is the answer.
	res, err := tx.ExecContext(ctx, `INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, reason, tx_hash, settled_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
		r.Scope.MerchantID, r.Scope.Mode, r.Key, r.Kind, r.Nonce, r.Payer, r.Payee, r.Amount, status, reasonArg, s.TxHash, s.At)
	if err != nil {
		return Settlement{}, false, store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Settlement{}, false, fmt.Errorf("%w: a concurrent operation settled %s first", ErrTransient, r.Key)
	}
	return s, true, nil
}

// SettleTx implements Local: the request is settled in the caller's
// transaction, in one statement when its key is new. WalletTransientOnce
// loses the first answer for a new key here too, and the settlement is
// asked for again under the same key, in the same transaction (never on a
// connection of its own: a full pool of transactions would wait forever).
func (t *Test) SettleTx(ctx context.Context, tx *store.Tx, r Request) (Settlement, error) {
	status, reason, err := t.decide(ctx, tx, r)
	if err != nil {
		return Settlement{}, err
	}
	s := Settlement{Key: r.Key, Kind: r.Kind, Nonce: r.Nonce, Payer: r.Payer, Payee: r.Payee, Amount: r.Amount,
		Status: status, Reason: reason, TxHash: txHash(r.Scope, r.Key), At: r.At.Truncate(time.Microsecond), Network: "test"}
	var reasonArg *string
	if reason != "" {
		reasonArg = &reason
	}
	// A settlement already made under the key answers (and for a payment,
	// one already made for the invoice): the insert does nothing then, and
	// a second statement, which sees what a concurrent one committed, reads
	// it.
	var inserted int
	err = tx.GetContext(ctx, &inserted, `WITH ins AS (
			INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, reason, tx_hash, settled_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING RETURNING 1
		) SELECT count(*) FROM ins`,
		r.Scope.MerchantID, r.Scope.Mode, r.Key, r.Kind, r.Nonce, r.Payer, r.Payee, r.Amount, status, reasonArg, s.TxHash, s.At)
	if err != nil {
		return Settlement{}, store.Translate(err)
	}
	if inserted == 1 && (r.Payer != WalletTransientOnce || r.Kind == Refund) {
		return s, nil
	}
	var rows []settlementRow
	err = tx.SelectContext(ctx, &rows, `SELECT `+settlementColumns+` FROM rail_settlements WHERE merchant_id = $1 AND mode = $2
			AND (key = $3 OR (kind = 'pay' AND $4 = 'pay' AND nonce = $5 AND status = 'succeeded'))
		ORDER BY key = $3 DESC LIMIT 1`, r.Scope.MerchantID, r.Scope.Mode, r.Key, r.Kind, r.Nonce)
	if err != nil {
		return Settlement{}, store.Translate(err)
	}
	if len(rows) == 0 {
		return Settlement{}, fmt.Errorf("%w: settlement %s conflicts with one not yet visible", ErrTransient, r.Key)
	}
	return rows[0].settlement(), nil
}

// decide applies the payer's behaviour. n counts the earlier operations on
// the same authorization (activation first).
func (t *Test) decide(ctx context.Context, tx *store.Tx, r Request) (status, reason string, err error) {
	if r.Kind == Refund {
		return Succeeded, "", nil
	}
	n := 0
	if r.Kind == Charge {
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1 AND mode = $2 AND nonce = $3 AND kind IN ('activate', 'charge')`,
			r.Scope.MerchantID, r.Scope.Mode, r.Nonce); err != nil {
			return "", "", store.Translate(err)
		}
	}
	switch r.Payer {
	case WalletInsufficient:
		return Failed, InsufficientFunds, nil
	case WalletRevokesAfter1st:
		if n > 0 {
			return Failed, AuthorizationRevoked, nil
		}
	case WalletFailsTwiceAfter1:
		if n == 1 || n == 2 {
			return Failed, InsufficientFunds, nil
		}
	}
	return Succeeded, "", nil
}

// txHash is the simulated transaction hash of a settlement: stable for its
// key, shaped like an EVM hash.
func txHash(s tenant.Scope, key string) string {
	h := sha256.Sum256([]byte("tollgate test rail\x00" + s.MerchantID + "\x00" + string(s.Mode) + "\x00" + key))
	return "0x" + hex.EncodeToString(h[:])
}

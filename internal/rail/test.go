package rail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Test is the deterministic test-mode rail. Its ledger is the
// rail_settlements table: Settle writes it in transactions of its own (as an
// outside system's would be), so a caller's crash after the rail answered is
// recovered by asking again with the same key; SettleTx writes it in the
// caller's transaction (Local). What happens is decided by
// the payer (the magic wallets):
//
//   - WalletSucceeds: every operation succeeds;
//   - WalletInsufficient: every payment and charge fails (insufficient_funds);
//   - WalletRevokesAfter1st: the first payment or activation succeeds; the
//     authorization is revoked before the next charge (authorization_revoked);
//   - WalletFailsTwiceAfter1: the first succeeds, the next two charges of
//     the authorization fail, the third succeeds (and later ones);
//   - WalletTransientOnce: every operation settles, but the first answer for
//     each key is lost (ErrTransient): asking again returns the settlement,
//     never a second one;
//   - WalletFailsAfter1st: the first succeeds and
//     every later charge fails, so dunning runs out.
//
// Refunds always succeed.
type Test struct {
	db *store.DB
}

// NewTest returns the test rail over db.
func NewTest(db *store.DB) *Test { return &Test{db: db} }

// Network is "test".
func (t *Test) Network() string { return "test" }

// Settle implements Rail. The requests are settled in one transaction of a
// few statements whatever their number (the billing engine settles
// hundreds at once): keys already settled answer their stored settlement;
// new ones are decided and stored together.
func (t *Test) Settle(ctx context.Context, reqs []Request) ([]Settlement, error) {
	out := make([]Settlement, len(reqs))
	var lost bool
	err := t.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		lost, err = t.settle(ctx, tx, reqs, out)
		return err
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

// SettleTx implements Local: the request is settled in the caller's
// transaction, in one statement when its key is new. WalletTransientOnce
// loses the first answer for a new key here too, and the settlement is
// asked for again under the same key, in the same transaction (never on a
// connection of its own: a full pool of transactions would wait forever).
func (t *Test) SettleTx(ctx context.Context, tx *store.Tx, r Request) (Settlement, error) {
	n := 0
	if r.Kind == Charge {
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1 AND mode = $2 AND nonce = $3 AND kind IN ('activate', 'charge')`,
			r.Scope.MerchantID, r.Scope.Mode, r.Nonce); err != nil {
			return Settlement{}, store.Translate(err)
		}
	}
	s := fresh(r, n)
	status, reason := s.Status, s.Reason
	var reasonArg *string
	if reason != "" {
		reasonArg = &reason
	}
	// A settlement already made under the key answers (and for a payment,
	// one already made for the invoice): the insert does nothing then, and
	// a second statement, which sees what a concurrent one committed, reads
	// it.
	var inserted int
	err := tx.GetContext(ctx, &inserted, `WITH ins AS (
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

// Decide implements Deciding: every operation but a charge is decided by
// its payer alone. WalletTransientOnce's lost answer needs no asking again
// here: SettleTx, asked again in the same transaction, answers the
// settlement it just stored, which is this one.
func (t *Test) Decide(r Request) (Settlement, bool) {
	if r.Kind == Charge {
		return Settlement{}, false
	}
	return fresh(r, 0), true
}

// fresh is the settlement of a new key; n counts the authorization's
// earlier operations.
func fresh(r Request, n int) Settlement {
	status, reason := decide(r, n)
	return Settlement{Key: r.Key, Kind: r.Kind, Nonce: r.Nonce, Payer: r.Payer, Payee: r.Payee, Amount: r.Amount,
		Status: status, Reason: reason, TxHash: txHash(r.Scope, r.Key), At: r.At.Truncate(time.Microsecond), Network: "test"}
}

// settle fills out for reqs in tx; lost is true when a new settlement's
// answer is to be lost (WalletTransientOnce).
func (t *Test) settle(ctx context.Context, tx *store.Tx, reqs []Request, out []Settlement) (lost bool, err error) {
	// Requests are grouped by scope: a batch usually has one or a few.
	byScope := map[tenant.Scope][]int{}
	for i, r := range reqs {
		byScope[r.Scope] = append(byScope[r.Scope], i)
	}
	for s, idx := range byScope {
		l, err := t.settleScope(ctx, tx, s, reqs, idx, out)
		if err != nil {
			return false, err
		}
		lost = lost || l
	}
	return lost, nil
}

func (t *Test) settleScope(ctx context.Context, tx *store.Tx, s tenant.Scope, reqs []Request, idx []int, out []Settlement) (bool, error) {
	keys, nonces := make([]string, len(idx)), make([]string, len(idx))
	for j, i := range idx {
		keys[j], nonces[j] = reqs[i].Key, reqs[i].Nonce
	}
	var rows []settlementRow
	// Settled before: by key, or an invoice already paid (whoever asks).
	if err := tx.SelectContext(ctx, &rows, store.CustomPlan+`SELECT `+settlementColumns+` FROM rail_settlements
		WHERE merchant_id = $1 AND mode = $2 AND (key = ANY ($3) OR (nonce = ANY ($4) AND kind = 'pay' AND status = 'succeeded'))`,
		s.MerchantID, s.Mode, pq.StringArray(keys), pq.StringArray(nonces)); err != nil {
		return false, store.Translate(err)
	}
	byKey, paid := map[string]settlementRow{}, map[string]settlementRow{}
	for _, r := range rows {
		byKey[r.Key] = r
		if r.Kind == Pay && r.Status == Succeeded {
			paid[r.Nonce] = r
		}
	}
	// How many operations each authorization had: the magic wallets
	// decide by it.
	var counts []struct {
		Nonce string `db:"nonce"`
		N     int    `db:"n"`
	}
	if err := tx.SelectContext(ctx, &counts, store.CustomPlan+`SELECT nonce, count(*) AS n FROM rail_settlements
		WHERE merchant_id = $1 AND mode = $2 AND nonce = ANY ($3) AND kind IN ('activate', 'charge') GROUP BY nonce`,
		s.MerchantID, s.Mode, pq.StringArray(nonces)); err != nil {
		return false, store.Translate(err)
	}
	ops := map[string]int{}
	for _, c := range counts {
		ops[c.Nonce] = c.N
	}
	var fresh []Settlement
	lost := false
	for _, i := range idx {
		r := reqs[i]
		if old, ok := byKey[r.Key]; ok {
			out[i] = old.settlement()
			continue
		}
		if old, ok := paid[r.Nonce]; ok && r.Kind == Pay {
			out[i] = old.settlement()
			continue
		}
		status, reason := decide(r, ops[r.Nonce])
		if r.Kind == Activate || r.Kind == Charge {
			ops[r.Nonce]++
		}
		st := Settlement{Key: r.Key, Kind: r.Kind, Nonce: r.Nonce, Payer: r.Payer, Payee: r.Payee, Amount: r.Amount,
			Status: status, Reason: reason, TxHash: txHash(r.Scope, r.Key), At: r.At.Truncate(time.Microsecond), Network: "test"}
		if r.Kind == Pay && status == Succeeded {
			paid[r.Nonce] = settlementRow{}
		}
		byKey[r.Key] = settlementRow{Key: r.Key}
		out[i] = st
		fresh = append(fresh, st)
		lost = lost || (r.Payer == WalletTransientOnce && r.Kind != Refund)
	}
	return lost, insertSettlements(ctx, tx, s, fresh)
}

// insertSettlements stores new settlements in one statement. One a
// concurrent request stored first (the same key, or a payment of the same
// invoice) makes the batch transient: asking again answers it.
func insertSettlements(ctx context.Context, tx *store.Tx, s tenant.Scope, ss []Settlement) error {
	if len(ss) == 0 {
		return nil
	}
	n := len(ss)
	keys, kinds, nonces, payers, payees, amounts, statuses, hashes, ats := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	reasons := make([]*string, n)
	for i, st := range ss {
		keys[i], kinds[i], nonces[i], payers[i], payees[i] = st.Key, st.Kind, st.Nonce, st.Payer, st.Payee
		amounts[i], statuses[i], hashes[i], ats[i] = st.Amount.String(), st.Status, st.TxHash, st.At.UTC().Format(time.RFC3339Nano)
		if st.Reason != "" {
			reason := st.Reason
			reasons[i] = &reason
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, reason, tx_hash, settled_at)
		SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::numeric[], $9::text[], $10::text[], $11::text[], $12::timestamptz[])
		ON CONFLICT DO NOTHING`,
		s.MerchantID, s.Mode, pq.StringArray(keys), pq.StringArray(kinds), pq.StringArray(nonces), pq.StringArray(payers), pq.StringArray(payees),
		pq.StringArray(amounts), pq.StringArray(statuses), store.NullTexts(reasons), pq.StringArray(hashes), pq.StringArray(ats))
	if err != nil {
		return store.Translate(err)
	}
	if got, _ := res.RowsAffected(); int(got) != n {
		return fmt.Errorf("%w: a concurrent operation settled first", ErrTransient)
	}
	return nil
}

// decide applies the payer's behaviour to an operation; n counts the
// authorization's earlier operations (activation first).
func decide(r Request, n int) (status, reason string) {
	if r.Kind == Refund {
		return Succeeded, ""
	}
	switch r.Payer {
	case WalletInsufficient:
		return Failed, InsufficientFunds
	case WalletRevokesAfter1st:
		if r.Kind == Charge && n > 0 {
			return Failed, AuthorizationRevoked
		}
	case WalletFailsTwiceAfter1:
		if r.Kind == Charge && (n == 1 || n == 2) {
			return Failed, InsufficientFunds
		}
	case WalletFailsAfter1st:
		if r.Kind == Charge && n > 0 {
			return Failed, InsufficientFunds
		}
	}
	return Succeeded, ""
}

// txHash is the simulated transaction hash of a settlement: stable for its
// key, shaped like an EVM hash.
func txHash(s tenant.Scope, key string) string {
	h := sha256.Sum256([]byte("tollgate test rail\x00" + s.MerchantID + "\x00" + string(s.Mode) + "\x00" + key))
	return "0x" + hex.EncodeToString(h[:])
}

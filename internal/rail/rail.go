// Package rail is what moves USDC: paying an invoice, activating a
// subscription's authorization (with its first charge), charging a period,
// refunding. Test mode runs the deterministic simulated rail of this
// package (Test), whose ledger is in PostgreSQL so restarts and replicas
// agree; live mode runs the on-chain rail (internal/chain).
//
// Every operation carries an idempotency key: the same key always answers
// the same settlement, so a caller that crashed between the rail's answer
// and recording it asks again with the same key and records what it gets,
// never charging twice. Keys are derived from what is being paid (the
// invoice, the subscription and period, the refund), never random.
package rail

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Kinds of operation.
const (
	Pay      = "pay"      // a one-time invoice payment
	Activate = "activate" // a subscription's authorization, with its first charge (amount 0 for metered plans)
	Charge   = "charge"   // a period's charge against an authorization
	Refund   = "refund"   // money back to the payer of a settlement
)

// Statuses of a settlement.
const (
	Succeeded = "succeeded"
	Failed    = "failed"
	// Pending: submitted, not final yet (the on-chain rail awaiting
	// confirmations). The caller asks again with the same key later.
	Pending = "pending"
)

// Reasons a settlement failed (the payment_failed message names them).
const (
	InsufficientFunds    = "insufficient_funds"
	AuthorizationRevoked = "authorization_revoked"
)

// Request is one operation.
type Request struct {
	Scope tenant.Scope
	Kind  string
	// Key identifies the operation: the same key answers the same
	// settlement forever.
	Key string
	// Nonce ties operations together: the invoice id for Pay (an invoice
	// is paid at most once), the authorization (the activation's Key) for
	// Activate and Charge, the refunded settlement's Key for Refund.
	Nonce  string
	Payer  string
	Payee  string
	Amount money.Amount
	// At is when the operation happens by the merchant's clock.
	At time.Time
	// Payload is what a live operation carries beyond the above: the
	// payer's (or, for a refund, the merchant's) signed authorization, of a
	// type the live rail defines. The test rail ignores it; the live rail
	// answers a request without one from what it recorded under Key (a
	// pending operation asked about again).
	Payload any
}

// Settlement is a rail's answer.
type Settlement struct {
	Key     string
	Kind    string
	Nonce   string
	Payer   string
	Payee   string
	Amount  money.Amount
	Status  string
	Reason  string // when Failed
	TxHash  string
	At      time.Time
	Network string
}

// Rail moves money.
type Rail interface {
	// Settle performs the operations, in order, each idempotent on its
	// Key, and answers one settlement per request. An error means nothing
	// is known about the requests from the first that failed on; asking
	// again with the same keys is always safe. A transient failure wraps
	// ErrTransient.
	Settle(ctx context.Context, reqs []Request) ([]Settlement, error)
	// Network names the rail on payments ("test" for the simulated rail).
	Network() string
}

// Local is a rail whose ledger is in the caller's database (the test rail).
// It can settle inside the caller's transaction, so an operation and its
// record commit together: one commit instead of two, and no settlement
// without its record to reconcile after a crash. SettleTx answers like
// Settle for one request (the same key, the same settlement); with
// ErrTransient the caller's transaction is to be abandoned and the payment
// asked for again.
type Local interface {
	Rail
	SettleTx(ctx context.Context, tx *store.Tx, req Request) (Settlement, error)
}

// Deciding is a Local rail that decides a new operation without reading
// its ledger (the test rail: the payer's magic wallet decides), so a
// caller can write the settlement in the same statement as its record: one
// statement for a whole payment. Decide returns the settlement SettleTx
// would store for req if req.Key were new; ok=false when the decision needs
// the ledger (a charge counts the authorization's earlier operations). A
// caller writing it itself writes it as SettleTx does (rail_settlements:
// the key unique, one succeeded payment per invoice) and, when the ledger
// refuses it (the key or the invoice settled already), asks SettleTx.
type Deciding interface {
	Local
	Decide(req Request) (st Settlement, ok bool)
}

// ErrTransient marks a failure worth retrying at once with the same key.
var ErrTransient = errors.New("rail: transient failure")

// IsTransient reports whether err wraps ErrTransient.
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }

// SettleOne settles one request, retrying a transient failure a few times
// with the same key (which never charges twice).
func SettleOne(ctx context.Context, r Rail, req Request) (Settlement, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var ss []Settlement
		if ss, err = r.Settle(ctx, []Request{req}); err == nil {
			return ss[0], nil
		}
		if !IsTransient(err) {
			break
		}
	}
	return Settlement{}, err
}

// Magic payer wallets of test mode, like test cards (the payments guide
// lists them).
const (
	WalletSucceeds         = "0x4242424242424242424242424242424242424242"
	WalletInsufficient     = "0x4000000000000000000000000000000000009995"
	WalletRevokesAfter1st  = "0x4000000000000000000000000000000000000341"
	WalletFailsTwiceAfter1 = "0x4000000000000000000000000000000000003063"
	WalletTransientOnce    = "0x4000000000000000000000000000000000000119"
	// WalletFailsAfter1st: the first
	// payment or activation succeeds and every later charge fails, so
	// dunning runs out (tollgate trigger subscription.dunning_exhausted).
	WalletFailsAfter1st = "0x4000000000000000000000000000000000000404"
)

// MagicWallets lists the test-mode payers, in the payments guide's order.
func MagicWallets() []string {
	return []string{WalletSucceeds, WalletInsufficient, WalletRevokesAfter1st, WalletFailsTwiceAfter1, WalletTransientOnce, WalletFailsAfter1st}
}

// CheckTestPayer normalises a test-mode payer address and refuses any that
// is not a magic wallet: invalid_request naming payer.
func CheckTestPayer(payer string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(payer))
	for _, w := range MagicWallets() {
		if p == w {
			return p, nil
		}
	}
	// One argument per wallet: messages clip each argument to a bounded
	// echo, and the list joined would be cut mid-address.
	return "", apperr.Field("payer", "test mode pays with a magic wallet: %s, %s, %s, %s, %s, %s", WalletSucceeds, WalletInsufficient,
		WalletRevokesAfter1st, WalletFailsTwiceAfter1, WalletTransientOnce, WalletFailsAfter1st)
}

// DecidedCTE is a WITH item, name, storing the succeeded settlements a
// Deciding rail decided, in the statement that records what they pay for:
// the ledger row is written as SettleTx writes it. query yields one row a
// settlement, with the columns merchant_id, mode, key, kind, nonce, payer,
// payee, amount, tx_hash and at. A plain insert: a key already in the ledger
// fails the whole statement (the caller then asks SettleTx). The item
// returns merchant_id and key.
func DecidedCTE(name, query string) string {
	return name + ` AS (
		INSERT INTO rail_settlements (merchant_id, mode, key, kind, nonce, payer, payee, amount, status, tx_hash, settled_at)
		SELECT q.merchant_id, q.mode, q.key, q.kind, q.nonce, q.payer, q.payee, q.amount, 'succeeded', q.tx_hash, q.at
		FROM (` + query + `) q RETURNING merchant_id, key
	)`
}

// Package chainrail is the live settlement rail: rail.Rail over
// internal/chain. It pays invoices with the payer's EIP-3009
// authorization, activates and charges PlanManager plans, and refunds with
// the merchant wallet's authorization, every transaction sent and paid for
// by the relayer. An operation answers pending until its transaction has
// the configured confirmations, then succeeded or failed; a reorg before
// that puts it back to pending, so nothing is recorded as paid that the
// chain does not hold.
//
// Step (the daemon's settlement job) moves the relayer on, records every
// final operation in the money path exactly once through a Recorder, and
// follows the chain for revocations.
package chainrail

import (
	"context"
	"crypto/ecdsa"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/relayer"
	"github.com/tollgatehq/tollgate/internal/chain/watch"
	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Config says which contracts the rail uses and how it confirms.
type Config struct {
	Token common.Address
	// PlanManager is zero when plans cannot be paid on this chain (an
	// operator who has not deployed one yet).
	PlanManager common.Address
	// Relayer tunes the relayer (Confirmations: how deep a transaction must
	// be before it counts; default 1).
	Relayer relayer.Config
	// FromBlock is where the watcher starts the first time (0: the head
	// when the rail is built).
	FromBlock uint64
	Log       *slog.Logger
	// Clock stamps settlements (nil: the wall clock).
	Clock clock.Clock
	// PermitPeriods is how many periods' caps a subscriber's permit lets
	// the plan manager draw (default DefaultPermitPeriods): the permit is
	// bounded, and renewed from the subscription's page when it runs low.
	PermitPeriods uint64
}

// DefaultPermitPeriods is the permit a subscriber signs by default: twelve
// periods' caps (a year of a monthly plan).
const DefaultPermitPeriods = 12

// Rail is the on-chain rail for one chain, token and relayer key.
type Rail struct {
	db      *store.DB
	b       chain.Backend
	token   *chain.Token
	plans   *chain.PlanManager
	relayer *relayer.Relayer
	watcher *watch.Watcher
	chainID int64
	network string
	confs   uint64
	log     *slog.Logger
	clock   clock.Clock
	periods uint64
}

var _ rail.Rail = (*Rail)(nil)

// New returns the rail over b, sending with key and storing in db. It reads
// the chain id and the head from the node and fails when it cannot.
func New(ctx context.Context, db *store.DB, b chain.Backend, key *ecdsa.PrivateKey, cfg Config) (*Rail, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Relayer.Log == nil {
		cfg.Relayer.Log = log
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Relayer.Confirmations == 0 {
		cfg.Relayer.Confirmations = 1
	}
	if cfg.PermitPeriods == 0 {
		cfg.PermitPeriods = DefaultPermitPeriods
	}
	rl, err := relayer.New(ctx, db, b, key, cfg.Relayer)
	if err != nil {
		return nil, err
	}
	from := cfg.FromBlock
	if from == 0 {
		if from, err = b.BlockNumber(ctx); err != nil {
			return nil, fmt.Errorf("chain head: %w", err)
		}
	}
	w, err := watch.New(ctx, db, b, watch.Config{Name: "chainrail", Token: cfg.Token, PlanManager: cfg.PlanManager,
		FromBlock: from, Log: log})
	if err != nil {
		return nil, err
	}
	r := &Rail{db: db, b: b, token: chain.NewToken(b, cfg.Token), relayer: rl, watcher: w,
		chainID: rl.ChainID().Int64(), confs: cfg.Relayer.Confirmations, log: log.With("component", "chainrail"), clock: cfg.Clock,
		periods: cfg.PermitPeriods}
	r.network = NetworkName(rl.ChainID().Uint64())
	if cfg.PlanManager != (common.Address{}) {
		r.plans = chain.NewPlanManager(b, cfg.PlanManager)
	}
	return r, nil
}

// NetworkName names a chain on payments: its usual name for well-known
// chains, its CAIP-2 id (eip155:N) otherwise.
func NetworkName(chainID uint64) string {
	switch chainID {
	case 1:
		return "ethereum"
	case 8453:
		return "base"
	case 84532:
		return "base-sepolia"
	case 10:
		return "optimism"
	case 42161:
		return "arbitrum"
	case 137:
		return "polygon"
	case 11155111:
		return "sepolia"
	}
	return fmt.Sprintf("eip155:%d", chainID)
}

// Network implements rail.Rail.
func (r *Rail) Network() string { return r.network }

// Confirmations is how deep a transaction must be before it counts.
func (r *Rail) Confirmations() uint64 { return r.confs }

// ChainID is the chain the rail settles on.
func (r *Rail) ChainID() uint64 { return uint64(r.chainID) }

// Token is the USDC contract the rail pays with.
func (r *Rail) Token() *chain.Token { return r.token }

// PlanManager is the plan contract, or nil when none is configured.
func (r *Rail) PlanManager() *chain.PlanManager { return r.plans }

// Relayer is the relayer sending the rail's transactions.
func (r *Rail) Relayer() *relayer.Relayer { return r.relayer }

// Clock is the clock the rail stamps settlements with.
func (r *Rail) Clock() clock.Clock { return r.clock }

// PermitPeriods is how many periods' caps a subscriber's permit covers.
func (r *Rail) PermitPeriods() uint64 { return r.periods }

// Backend is the node the rail talks to.
func (r *Rail) Backend() chain.Backend { return r.b }

// Transfer is the payload of a Pay (the payer's) or Refund (the merchant
// wallet's): a signed EIP-3009 authorization.
type Transfer struct {
	Authorization chain.TransferAuthorization
	// NotAfter, when set, bounds validBefore (an invoice's due date).
	NotAfter time.Time
}

// Activation is the payload of an Activate: the payer's signed plan and
// permit, and the subscription to create once the activation is confirmed.
type Activation struct {
	Plan      chain.Plan
	Signature []byte
	Permit    chain.SignedPermit
	// PlanID (price_…) and CustomerID name the subscription; CouponID is
	// the coupon redeemed at its checkout ("" for none): the first charge
	// is discounted, the plan's cap is not.
	PlanID, CustomerID, CouponID string
	// Change, when set, makes the activation a live plan change of an
	// existing subscription (to PlanID) rather than a new subscription.
	Change *PlanChange
}

// subject is what an activation row records for the worker.
type subject struct {
	PlanID     string `json:"plan_id,omitempty"`
	CustomerID string `json:"customer_id,omitempty"`
	CouponID   string `json:"coupon_id,omitempty"`
	*PlanChange
}

// row is a chain_settlements row.
type row struct {
	MerchantID  string         `db:"merchant_id"`
	Mode        tenant.Mode    `db:"mode"`
	Key         string         `db:"key"`
	RelayerKey  string         `db:"relayer_key"`
	Kind        string         `db:"kind"`
	Nonce       string         `db:"nonce"`
	Payer       string         `db:"payer"`
	Payee       string         `db:"payee"`
	Amount      money.Amount   `db:"amount"`
	Subject     []byte         `db:"subject"`
	Plan        []byte         `db:"plan"`
	PlanID      sql.NullString `db:"plan_id"`
	Status      string         `db:"status"`
	Reason      sql.NullString `db:"reason"`
	TxHash      sql.NullString `db:"tx_hash"`
	RequestedAt time.Time      `db:"requested_at"`
	SettledAt   *time.Time     `db:"settled_at"`
	RecordedAt  *time.Time     `db:"recorded_at"`
}

const rowColumns = `merchant_id, mode, key, relayer_key, kind, nonce, payer, payee, amount, subject, plan, plan_id,
	status, reason, tx_hash, requested_at, settled_at, recorded_at`

func (w row) scope() tenant.Scope { return tenant.Scope{MerchantID: w.MerchantID, Mode: w.Mode} }

func (r *Rail) settlement(w row) rail.Settlement {
	at := w.RequestedAt
	if w.SettledAt != nil {
		at = *w.SettledAt
	}
	return rail.Settlement{Key: w.Key, Kind: w.Kind, Nonce: w.Nonce, Payer: w.Payer, Payee: w.Payee, Amount: w.Amount,
		Status: w.Status, Reason: w.Reason.String, TxHash: w.TxHash.String, At: at, Network: r.network}
}

// Settle implements rail.Rail. A request whose key the rail has seen
// answers that operation as it stands now (pending until confirmed);
// a new one is verified off-chain, recorded and submitted, and answers
// pending, or failed with the reason the chain would refuse it for (no gas
// is spent then). Pay and Refund need a *Transfer payload, Activate an
// *Activation; Charge draws on the plan its Nonce's activation recorded.
// It fails with invalid_request for a request it cannot carry out (a
// missing payload, a payload that does not match the request), and with a
// plain error when the node or the database cannot be reached.
func (r *Rail) Settle(ctx context.Context, reqs []rail.Request) ([]rail.Settlement, error) {
	out := make([]rail.Settlement, len(reqs))
	for i, req := range reqs {
		st, err := r.settle(ctx, req)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

func (r *Rail) settle(ctx context.Context, req rail.Request) (rail.Settlement, error) {
	w, err := r.get(ctx, r.db, req.Scope, req.Key)
	if err != nil {
		return rail.Settlement{}, err
	}
	if w != nil {
		known, err := r.submitted(ctx, *w)
		if err != nil {
			return rail.Settlement{}, err
		}
		// A row whose transaction was never stored (a crash between the
		// two) is submitted again when the request brings its payload.
		if known || w.Status != rail.Pending || req.Payload == nil && req.Kind != rail.Charge {
			return r.answer(ctx, *w)
		}
	}
	switch req.Kind {
	case rail.Pay:
		return r.pay(ctx, req)
	case rail.Activate:
		return r.activate(ctx, req)
	case rail.Charge:
		return r.charge(ctx, req)
	case rail.Refund:
		return r.refund(ctx, req)
	}
	return rail.Settlement{}, apperr.New(apperr.InvalidRequest, "unknown rail operation %q", req.Kind)
}

// answer returns a row's settlement, finishing it first when the relayer
// says its transaction is final.
func (r *Rail) answer(ctx context.Context, w row) (rail.Settlement, error) {
	if w.Status != rail.Pending {
		return r.settlement(w), nil
	}
	s, err := r.relayer.Status(ctx, w.RelayerKey)
	if apperr.CodeOf(err) == apperr.ResourceNotFound {
		return r.settlement(w), nil
	}
	if err != nil {
		return rail.Settlement{}, err
	}
	switch s.State {
	case relayer.Confirmed:
		return r.finish(ctx, w, rail.Succeeded, "", s.TxHash)
	case relayer.Reverted, relayer.Failed:
		return r.finish(ctx, w, rail.Failed, reasonOf(s), s.TxHash)
	}
	return r.settlement(w), nil
}

// submitted reports whether the relayer has a transaction for the row.
func (r *Rail) submitted(ctx context.Context, w row) (bool, error) {
	_, err := r.relayer.Status(ctx, w.RelayerKey)
	if apperr.CodeOf(err) == apperr.ResourceNotFound {
		return false, nil
	}
	return err == nil, err
}

// reasonOf turns a relayer failure into the rail's reason vocabulary (the
// chain's reasons share the rail's names where both have one).
func reasonOf(s relayer.Settlement) string {
	if reason := s.Reason(); reason != "" {
		return string(reason)
	}
	return string(chain.TransactionReverted)
}

// finish records a row's final status once, and returns it as stored.
func (r *Rail) finish(ctx context.Context, w row, status, reason string, tx common.Hash) (rail.Settlement, error) {
	var hash *string
	if tx != (common.Hash{}) {
		h := strings.ToLower(tx.Hex())
		hash = &h
	}
	var reasonArg *string
	if reason != "" {
		reasonArg = &reason
	}
	var out []row
	err := r.db.SelectContext(ctx, &out, `UPDATE chain_settlements SET status = $4, reason = $5, tx_hash = coalesce($6, tx_hash),
			settled_at = coalesce(settled_at, $7)
		WHERE merchant_id = $1 AND mode = $2 AND key = $3 AND status = 'pending' RETURNING `+rowColumns,
		w.MerchantID, w.Mode, w.Key, status, reasonArg, hash, r.clock.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return rail.Settlement{}, store.Translate(err)
	}
	if len(out) == 0 { // finished by someone else meanwhile
		again, err := r.get(ctx, r.db, w.scope(), w.Key)
		if err != nil || again == nil {
			return rail.Settlement{}, errors.Join(err, fmt.Errorf("chain settlement %s vanished", w.Key))
		}
		return r.settlement(*again), nil
	}
	if status == rail.Succeeded {
		r.log.Info("settlement confirmed", "key", w.Key, "kind", w.Kind, "tx", tx)
	} else {
		r.log.Warn("settlement failed", "key", w.Key, "kind", w.Kind, "reason", reason, "tx", tx)
	}
	return r.settlement(out[0]), nil
}

// relayerKey is the relayer's idempotency key of a request: the relayer's
// keys are global, the rail's are per merchant and mode.
func relayerKey(s tenant.Scope, key string) string {
	return s.MerchantID + "/" + string(s.Mode) + "/" + key
}

func newRow(req rail.Request) row {
	return row{MerchantID: req.Scope.MerchantID, Mode: req.Scope.Mode, Key: req.Key, RelayerKey: relayerKey(req.Scope, req.Key),
		Kind: req.Kind, Nonce: req.Nonce, Payer: strings.ToLower(req.Payer), Payee: strings.ToLower(req.Payee), Amount: req.Amount,
		Subject: []byte("{}"), Status: rail.Pending, RequestedAt: req.At.UTC().Truncate(time.Microsecond)}
}

// insert stores w unless a row of its key exists (or, for a payment,
// another payment of the same invoice is in flight or done), and returns
// the row that stands.
func (r *Rail) insert(ctx context.Context, w row) (row, error) {
	var plan any
	if len(w.Plan) > 0 {
		plan = w.Plan
	}
	_, err := r.db.ExecContext(ctx, `INSERT INTO chain_settlements (merchant_id, mode, key, chain_id, relayer_key, kind, nonce,
			payer, payee, amount, subject, plan, plan_id, requested_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
		w.MerchantID, w.Mode, w.Key, r.chainID, w.RelayerKey, w.Kind, w.Nonce, w.Payer, w.Payee, w.Amount, w.Subject, plan,
		w.PlanID, w.RequestedAt)
	if err != nil {
		return row{}, store.Translate(err)
	}
	got, err := r.get(ctx, r.db, w.scope(), w.Key)
	if err != nil || got != nil {
		if got == nil {
			return row{}, err
		}
		return *got, err
	}
	// The row in the way: the invoice's other payment, or the
	// subscription's other open re-authorization (migration 068).
	var other []row
	if err := r.db.SelectContext(ctx, &other, `SELECT `+rowColumns+` FROM chain_settlements WHERE merchant_id = $1 AND mode = $2
		AND (nonce = $3 AND kind = 'pay' AND status IN ('pending', 'succeeded')
			OR kind = 'activate' AND subject->>'subscription_id' = $4 AND status <> 'failed' AND recorded_at IS NULL)`,
		w.MerchantID, w.Mode, w.Nonce, subscriptionOf(w)); err != nil {
		return row{}, store.Translate(err)
	}
	if len(other) == 0 {
		return row{}, fmt.Errorf("chain settlement %s: neither stored nor in conflict", w.Key)
	}
	return other[0], nil
}

// forget deletes a payment or activation the chain refused before any
// transaction was stored, so the payer can fix it (fund the wallet, sign
// again) and try under the same key.
func (r *Rail) forget(ctx context.Context, w row) error {
	_, err := r.db.ExecContext(ctx, `DELETE FROM chain_settlements WHERE merchant_id = $1 AND mode = $2 AND key = $3 AND status = 'pending'`,
		w.MerchantID, w.Mode, w.Key)
	return store.Translate(err)
}

// refused is the settlement of an operation the chain would refuse.
func (r *Rail) refused(req rail.Request, f *chain.Failure) rail.Settlement {
	return rail.Settlement{Key: req.Key, Kind: req.Kind, Nonce: req.Nonce, Payer: strings.ToLower(req.Payer),
		Payee: strings.ToLower(req.Payee), Amount: req.Amount, Status: rail.Failed, Reason: string(f.Reason), At: req.At, Network: r.network}
}

// asFailure returns err's *chain.Failure, if it is one.
func asFailure(err error) *chain.Failure {
	var f *chain.Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

func amount(a money.Amount) *big.Int { return big.NewInt(int64(a)) }

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and big integers always marshal
	}
	return b
}

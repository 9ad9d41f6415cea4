package relayer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/store"
)

func errNotFound(key string) error {
	return apperr.New(apperr.ResourceNotFound, "no chain transaction under idempotency key %q", key)
}

// Submit sends c once per idempotency key and returns its settlement: a
// second Submit with the same key returns the first one's settlement
// without sending anything.
//
// Before signing, the call is estimated from the relayer's address: a call
// that would revert returns a *chain.Failure (its reason from the revert
// string) and stores nothing, so it costs no gas. When the revert says the
// call's EIP-3009 authorization is already used, the chain's logs decide:
// used by someone else's transfer, the settlement tracks that transaction;
// canceled, it is a Failure (authorization_canceled).
//
// The signed transaction is stored before it is broadcast; a failed
// broadcast is not an error (Step retries it). Submit fails with
// invalid_request when key was used for a different call, and with a plain
// error when the node or the database cannot be reached.
func (r *Relayer) Submit(ctx context.Context, key string, c chain.Call) (Settlement, error) {
	if key == "" {
		return Settlement{}, apperr.Field("idempotency_key", "is required")
	}
	if prev, err := r.existing(ctx, key, c); prev != nil || err != nil {
		if prev == nil {
			return Settlement{}, err
		}
		return *prev, err
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return Settlement{}, fmt.Errorf("relayer: latest block: %w", err)
	}
	gas, err := r.b.EstimateGas(ctx, ethereum.CallMsg{From: r.from, To: &c.To, Data: c.Data})
	if err != nil {
		reason, reverted := chain.RevertReason(err)
		if !reverted {
			return Settlement{}, fmt.Errorf("relayer: estimate gas: %w", err)
		}
		f := chain.ReasonFor(reason)
		if f.Reason == chain.AuthorizationUsed && c.Authorization != nil {
			return r.adoptForeign(ctx, key, c, head.Number.Uint64(), f)
		}
		return Settlement{}, f
	}
	gas += gas / 5 // headroom: state may change between estimate and inclusion
	tip, feeCap, err := r.fees(ctx, head, nil)
	if err != nil {
		return Settlement{}, err
	}
	expect, err := json.Marshal(nonNil(c.Expect))
	if err != nil {
		return Settlement{}, err
	}
	auth, err := json.Marshal(c.Authorization)
	if err != nil {
		return Settlement{}, err
	}

	var tx *types.Transaction
	var out Settlement
	err = r.db.InTx(ctx, func(q *store.Tx) error {
		if err := r.lockNonces(ctx, q); err != nil {
			return err
		}
		if in, err := getIntent(ctx, q, r.chainID.Int64(), key); err != nil || in != nil {
			if in != nil {
				out = in.settlement()
			}
			return err
		}
		nonce, err := r.nextNonce(ctx, q)
		if err != nil {
			return err
		}
		tx, err = r.sign(nonce, c.To, c.Data, gas, tip, feeCap)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO chain_intents (chain_id, idempotency_key, sender, nonce,
			to_address, data, gas_limit, expect, authorization_ref, search_from)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			r.chainID.Int64(), key, r.sender, int64(nonce), hex(c.To), c.Data, int64(gas), expect, nullJSON(auth),
			head.Number.Int64()); err != nil {
			return err
		}
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		if err := insertAttempt(ctx, q, r.chainID.Int64(), key, 0, nonce, tx.Hash(), raw, tip, feeCap); err != nil {
			return err
		}
		n := nonce
		out = Settlement{Key: key, State: Pending, Nonce: &n}
		return nil
	})
	if err != nil || tx == nil {
		return out, err
	}
	if r.afterStore != nil {
		if err := r.afterStore(); err != nil {
			return out, err
		}
	}
	_ = r.broadcast(ctx, tx, head.Number.Uint64())
	return out, nil
}

// existing returns the settlement already stored under key, checking it is
// for the same call.
func (r *Relayer) existing(ctx context.Context, key string, c chain.Call) (*Settlement, error) {
	in, err := getIntent(ctx, r.db, r.chainID.Int64(), key)
	if err != nil || in == nil {
		return nil, err
	}
	if !bytes.Equal(in.Data, c.Data) || in.To != hex(c.To) {
		return nil, apperr.Field("idempotency_key", "was used for a different call")
	}
	s := in.settlement()
	return &s, nil
}

// adoptForeign handles an authorization someone else already used: it
// tracks their transaction when a transfer used it, and fails when the
// authorizer canceled it.
func (r *Relayer) adoptForeign(ctx context.Context, key string, c chain.Call, head uint64, f *chain.Failure) (Settlement, error) {
	use, err := chain.FindAuthorizationUse(ctx, r.b, *c.Authorization, r.lookback(head), r.cfg.LogRange)
	if err != nil {
		return Settlement{}, err
	}
	if use == nil {
		return Settlement{}, f
	}
	if use.Canceled {
		return Settlement{}, &chain.Failure{Reason: chain.AuthorizationCanceled, Detail: "canceled in " + use.TxHash.Hex()}
	}
	expect, _ := json.Marshal(nonNil(c.Expect))
	auth, _ := json.Marshal(c.Authorization)
	_, err = r.db.ExecContext(ctx, `INSERT INTO chain_intents (chain_id, idempotency_key, sender, to_address, data,
		gas_limit, expect, authorization_ref, search_from, status, tx_hash)
		VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, 'mined', $9) ON CONFLICT DO NOTHING`,
		r.chainID.Int64(), key, r.sender, hex(c.To), c.Data, expect, nullJSON(auth), int64(r.lookback(head)), hex(use.TxHash))
	if err != nil {
		return Settlement{}, store.Translate(err)
	}
	r.log.Info("authorization already used by another transaction; tracking it", "key", key, "tx", use.TxHash)
	return r.Status(ctx, key)
}

// lookback is where reconciliation starts searching when a call is first
// seen already used: about a day of 2-second blocks.
func (r *Relayer) lookback(head uint64) uint64 {
	const window = 50_000
	if head < window {
		return 0
	}
	return head - window
}

// lockNonces takes the key's nonce lock until q ends: one nonce manager per
// key, shared by every replica.
func (r *Relayer) lockNonces(ctx context.Context, q *store.Tx) error {
	_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
		fmt.Sprintf("tollgate.relayer.nonce:%s:%s", r.chainID, r.sender))
	return err
}

// nextNonce is the larger of the node's pending nonce and one past the
// highest nonce stored (a stored transaction may not have reached the node).
func (r *Relayer) nextNonce(ctx context.Context, q *store.Tx) (uint64, error) {
	pending, err := r.b.PendingNonceAt(ctx, r.from)
	if err != nil {
		return 0, fmt.Errorf("relayer: pending nonce: %w", err)
	}
	var stored *int64
	if err := q.GetContext(ctx, &stored, `SELECT max(nonce) FROM chain_intents WHERE chain_id = $1 AND sender = $2`,
		r.chainID.Int64(), r.sender); err != nil {
		return 0, err
	}
	if stored != nil && uint64(*stored)+1 > pending {
		return uint64(*stored) + 1, nil
	}
	return pending, nil
}

// fees returns the tip and fee cap for a new attempt. prev is the attempt
// being replaced (nil for a first one): a replacement bids at least 25%
// more on both, above the 10% nodes require.
func (r *Relayer) fees(ctx context.Context, head *types.Header, prev *attempt) (tip, feeCap *big.Int, err error) {
	tip, err = r.b.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("relayer: suggest tip: %w", err)
	}
	if prev == nil && r.cfg.FirstTip != nil {
		tip = new(big.Int).Set(r.cfg.FirstTip)
	}
	if r.cfg.MinTip != nil && tip.Cmp(r.cfg.MinTip) < 0 {
		tip = new(big.Int).Set(r.cfg.MinTip)
	}
	base := head.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	feeCap = new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	if prev != nil {
		oldTip, _ := new(big.Int).SetString(prev.TipCap, 10)
		oldCap, _ := new(big.Int).SetString(prev.FeeCap, 10)
		tip = maxBig(tip, bump(oldTip))
		feeCap = maxBig(new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip), bump(oldCap))
	}
	return tip, feeCap, nil
}

func (r *Relayer) sign(nonce uint64, to common.Address, data []byte, gas uint64, tip, feeCap *big.Int) (*types.Transaction, error) {
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: r.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &to, Data: data,
	})
	return types.SignTx(tx, types.LatestSignerForChainID(r.chainID), r.key)
}

// broadcast sends tx and records when. A failure is logged and returned,
// but the transaction is stored: Step sends it again (or replaces it when
// the node says it is underpriced).
func (r *Relayer) broadcast(ctx context.Context, tx *types.Transaction, head uint64) error {
	err := r.b.SendTransaction(ctx, tx)
	if err != nil && !alreadyKnown(err) {
		r.log.Warn("broadcast failed; will retry", "tx", tx.Hash(), "nonce", tx.Nonce(), "err", err)
		return err
	}
	if err := markBroadcast(ctx, r.db, r.chainID.Int64(), tx.Hash(), head); err != nil {
		r.log.Warn("record broadcast", "tx", tx.Hash(), "err", err)
	}
	return nil
}

// underpriced reports a node refusing a transaction for its fees.
func underpriced(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "underpriced") || strings.Contains(s, "tip too low") || strings.Contains(s, "fee cap less than") ||
		strings.Contains(s, "max fee per gas less than")
}

// alreadyKnown reports a node saying it has the transaction already
// (geth: "already known"; others: "known transaction").
func alreadyKnown(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "already known") || strings.Contains(s, "known transaction")
}

func bump(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	out := new(big.Int).Mul(v, big.NewInt(5))
	out.Div(out, big.NewInt(4))
	return out.Add(out, big.NewInt(1))
}

func maxBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func nonNil(t []chain.Transfer) []chain.Transfer {
	if t == nil {
		return []chain.Transfer{}
	}
	return t
}

func nullJSON(b []byte) any {
	if string(b) == "null" {
		return nil
	}
	return b
}

package relayer

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/store"
)

// replace signs the same call with the same nonce and a higher tip, stores
// it, then broadcasts it.
func (r *Relayer) replace(ctx context.Context, head *types.Header, in *intent, prev attempt, old *types.Transaction) error {
	tip, feeCap, err := r.fees(ctx, head, &prev)
	if err != nil {
		return err
	}
	tx, err := r.sign(old.Nonce(), *old.To(), old.Data(), old.Gas(), tip, feeCap)
	if err != nil {
		return err
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return err
	}
	if err := insertAttempt(ctx, r.db, r.chainID.Int64(), in.Key, prev.Attempt+1, old.Nonce(), tx.Hash(), raw, tip, feeCap); err != nil {
		return err
	}
	r.log.Info("replacing stuck transaction", "key", in.Key, "old", old.Hash(), "new", tx.Hash(), "nonce", tx.Nonce(),
		"tip_wei", tip, "fee_cap_wei", feeCap)
	_ = r.broadcast(ctx, tx, head.Number.Uint64())
	return nil
}

// sendOwn signs, stores and broadcasts the intent's call with a fresh
// nonce, for an intent that had no transaction of ours.
func (r *Relayer) sendOwn(ctx context.Context, head *types.Header, in *intent) error {
	to := common.HexToAddress(in.To)
	gas, err := r.b.EstimateGas(ctx, ethereum.CallMsg{From: r.from, To: &to, Data: in.Data})
	if err != nil {
		if reason, ok := chain.RevertReason(err); ok {
			in.Status = Failed
			in.Failure = nullString(chain.ReasonFor(reason).Error())
			return nil
		}
		return fmt.Errorf("estimate gas: %w", err)
	}
	gas += gas / 5
	tip, feeCap, err := r.fees(ctx, head, nil)
	if err != nil {
		return err
	}
	var tx *types.Transaction
	err = r.db.InTx(ctx, func(q *store.Tx) error {
		if err := r.lockNonces(ctx, q); err != nil {
			return err
		}
		nonce, err := r.nextNonce(ctx, q)
		if err != nil {
			return err
		}
		if tx, err = r.sign(nonce, to, in.Data, gas, tip, feeCap); err != nil {
			return err
		}
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE chain_intents SET nonce = $3, gas_limit = $4, updated_at = now()
			WHERE chain_id = $1 AND idempotency_key = $2`, in.ChainID, in.Key, int64(nonce), int64(gas)); err != nil {
			return err
		}
		return insertAttempt(ctx, q, in.ChainID, in.Key, 0, nonce, tx.Hash(), raw, tip, feeCap)
	})
	if err != nil {
		return err
	}
	in.Nonce = nullInt(tx.Nonce())
	r.log.Info("the transaction that used the authorization was reorganised away; sending our own", "key", in.Key, "tx", tx.Hash())
	_ = r.broadcast(ctx, tx, head.Number.Uint64())
	return nil
}

// fillNonces keeps the nonce sequence gap-free: a settlement decided by
// someone else's transaction (or failed) may hold a nonce of ours that was
// stored but never reached the node; every later transaction would wait
// behind it. Its stored bytes are broadcast (they revert harmlessly).
func (r *Relayer) fillNonces(ctx context.Context, head *types.Header, confirmedNonce uint64) error {
	var raws [][]byte
	err := r.db.SelectContext(ctx, &raws, `SELECT DISTINCT ON (t.nonce) t.raw FROM chain_intents i
		JOIN chain_transactions t ON t.chain_id = i.chain_id AND t.idempotency_key = i.idempotency_key
		WHERE i.chain_id = $1 AND i.sender = $2 AND i.nonce >= $3 AND i.status NOT IN ('pending', 'mined')
		ORDER BY t.nonce, t.attempt DESC`, r.chainID.Int64(), r.sender, int64(confirmedNonce))
	if err != nil {
		return store.Translate(err)
	}
	for _, raw := range raws {
		tx := new(types.Transaction)
		if err := tx.UnmarshalBinary(raw); err != nil {
			return err
		}
		if _, _, err := r.b.TransactionByHash(ctx, tx.Hash()); errors.Is(err, ethereum.NotFound) {
			r.log.Info("broadcasting a settled intent's transaction to fill its nonce", "tx", tx.Hash(), "nonce", tx.Nonce())
			_ = r.broadcast(ctx, tx, head.Number.Uint64())
		}
	}
	return nil
}

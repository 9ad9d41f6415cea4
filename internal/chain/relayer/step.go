package relayer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// Step advances every open settlement of this relayer once and returns
// those whose state changed (a reorg that takes a mined one out of the
// canonical chain reports it Pending again). For each it looks for a
// canonical receipt of any of its transactions; without one it rebroadcasts
// the stored bytes the node does not know, replaces a transaction waiting
// StuckBlocks or more with a higher tip, and checks whether someone else
// used its authorization. It also refreshes the balance for LastBalance.
//
// Replicas may all call Step: one runs at a time per relayer key (a
// PostgreSQL advisory lock); the others return nothing. Errors are the node
// or the database being unreachable; the step can simply run again.
func (r *Relayer) Step(ctx context.Context) ([]Settlement, error) {
	conn, err := r.db.Connx(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	lock := fmt.Sprintf("tollgate.relayer.step:%s:%s", r.chainID, r.sender)
	var mine bool
	if err := conn.QueryRowxContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, lock).Scan(&mine); err != nil {
		return nil, err
	}
	if !mine {
		return nil, nil
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lock) //nolint:errcheck

	if _, _, err := r.Balance(ctx); err != nil {
		r.log.Warn("balance", "err", err)
	}
	// The confirmed nonce is read before any receipt: a nonce found used
	// with none of our receipts found afterwards was taken by another
	// transaction, not by ours mined in between.
	confirmedNonce, err := r.b.NonceAt(ctx, r.from, nil)
	if err != nil {
		return nil, fmt.Errorf("relayer: nonce: %w", err)
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("relayer: latest block: %w", err)
	}
	open, err := openIntents(ctx, r.db, r.chainID.Int64(), r.sender)
	if err != nil {
		return nil, err
	}
	if err := r.fillNonces(ctx, head, confirmedNonce); err != nil {
		return nil, err
	}
	var changed []Settlement
	for i := range open {
		in := &open[i]
		before := in.settlement()
		if err := r.advance(ctx, head, confirmedNonce, in); err != nil {
			return changed, fmt.Errorf("relayer: %s: %w", in.Key, err)
		}
		after := in.settlement()
		if after.State == before.State && after.TxHash == before.TxHash && after.BlockNumber == before.BlockNumber &&
			after.Confirmations == before.Confirmations && after.Failure == before.Failure {
			continue
		}
		if err := saveState(ctx, r.db, in); err != nil {
			return changed, err
		}
		if after.State != before.State || after.TxHash != before.TxHash {
			if before.State == Mined && after.State == Pending {
				r.log.Warn("settlement left the canonical chain (reorg); pending again", "key", in.Key, "tx", before.TxHash)
			}
			changed = append(changed, after)
		}
	}
	return changed, nil
}

func (r *Relayer) advance(ctx context.Context, head *types.Header, confirmedNonce uint64, in *intent) error {
	atts, err := attempts(ctx, r.db, r.chainID.Int64(), in.Key)
	if err != nil {
		return err
	}
	var hashes []common.Hash
	if in.TxHash.Valid {
		hashes = append(hashes, common.HexToHash(in.TxHash.String))
	}
	for _, a := range atts {
		hashes = append(hashes, common.HexToHash(a.Hash))
	}
	rcpt, err := r.canonicalReceipt(ctx, hashes...)
	if err != nil {
		return err
	}
	if rcpt != nil {
		return r.judge(ctx, head, in, rcpt)
	}
	// Not in a canonical block (any more): pending.
	in.Status, in.Confirmations = Pending, 0
	in.TxHash, in.BlockNumber, in.BlockHash = sql.NullString{}, sql.NullInt64{}, sql.NullString{}

	ref, err := in.authorization()
	if err != nil {
		return err
	}
	used := false
	if ref != nil {
		if used, err = chain.NewToken(r.b, ref.Token).AuthorizationState(ctx, ref.Authorizer, ref.Nonce); err != nil {
			return err
		}
		if used {
			done, err := r.foreignUse(ctx, head, in, *ref)
			if done || err != nil {
				return err
			}
		}
	}
	if !in.Nonce.Valid || len(atts) == 0 {
		if ref != nil && !used {
			// We were tracking someone else's transaction, a reorg took
			// it away and the authorization is unused again: send it.
			return r.sendOwn(ctx, head, in)
		}
		return nil
	}
	if confirmedNonce > uint64(in.Nonce.Int64) {
		in.Status = Failed
		in.Failure = nullString(string(chain.NonceTaken) + ": nonce " + fmt.Sprint(in.Nonce.Int64) + " was used by a transaction tollgate did not store")
		return nil
	}
	latest := atts[0]
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(latest.Raw); err != nil {
		return fmt.Errorf("stored transaction %s: %w", latest.Hash, err)
	}
	_, _, err = r.b.TransactionByHash(ctx, tx.Hash())
	switch {
	case errors.Is(err, ethereum.NotFound):
		// Never broadcast (killed after storing it), or dropped by the node.
		r.log.Info("rebroadcasting stored transaction", "key", in.Key, "tx", tx.Hash(), "nonce", tx.Nonce())
		if err := r.broadcast(ctx, tx, head.Number.Uint64()); err != nil && underpriced(err) {
			return r.replace(ctx, head, in, latest, tx)
		}
	case err != nil:
		return fmt.Errorf("transaction %s: %w", tx.Hash(), err)
	case !latest.BroadcastBlock.Valid:
		return markBroadcast(ctx, r.db, r.chainID.Int64(), tx.Hash(), head.Number.Uint64())
	case head.Number.Uint64() >= uint64(latest.BroadcastBlock.Int64)+r.cfg.StuckBlocks:
		return r.replace(ctx, head, in, latest, tx)
	}
	return nil
}

// foreignUse looks up who used the intent's authorization. done is true
// when that decided the intent (tracked someone else's transfer, or failed
// on a deep enough cancellation).
func (r *Relayer) foreignUse(ctx context.Context, head *types.Header, in *intent, ref chain.AuthorizationRef) (done bool, err error) {
	use, err := chain.FindAuthorizationUse(ctx, r.b, ref, uint64(in.SearchFrom), r.cfg.LogRange)
	if err != nil || use == nil {
		return false, err
	}
	if use.Canceled {
		if head.Number.Uint64()+1 >= use.BlockNumber+r.cfg.Confirmations {
			in.Status = Failed
			in.Failure = nullString(string(chain.AuthorizationCanceled) + ": canceled in " + use.TxHash.Hex())
		}
		return true, nil
	}
	rcpt, err := r.canonicalReceipt(ctx, use.TxHash)
	if err != nil || rcpt == nil {
		return false, err
	}
	return true, r.judge(ctx, head, in, rcpt)
}

// judge sets the intent's state from a canonical receipt.
func (r *Relayer) judge(ctx context.Context, head *types.Header, in *intent, rcpt *types.Receipt) error {
	bn := rcpt.BlockNumber.Uint64()
	confs := head.Number.Uint64() + 1 - bn
	if head.Number.Uint64() < bn {
		confs = 0
	}
	in.TxHash = nullString(hex(rcpt.TxHash))
	in.BlockNumber = nullInt(bn)
	in.BlockHash = nullString(hex(rcpt.BlockHash))
	in.Confirmations = int64(confs)
	deep := confs >= r.cfg.Confirmations
	in.Status = Mined
	if rcpt.Status != types.ReceiptStatusSuccessful {
		ref, err := in.authorization()
		if err != nil {
			return err
		}
		if ref != nil {
			// Our transfer reverted: if someone else's used the same
			// authorization first, theirs is the settlement.
			use, err := chain.FindAuthorizationUse(ctx, r.b, *ref, uint64(in.SearchFrom), r.cfg.LogRange)
			if err != nil {
				return err
			}
			if use != nil && use.TxHash != rcpt.TxHash {
				if use.Canceled {
					if deep {
						in.Status = Failed
						in.Failure = nullString(string(chain.AuthorizationCanceled) + ": canceled in " + use.TxHash.Hex())
					}
					return nil
				}
				other, err := r.canonicalReceipt(ctx, use.TxHash)
				if err != nil {
					return err
				}
				if other != nil && other.Status == types.ReceiptStatusSuccessful {
					return r.judge(ctx, head, in, other)
				}
			}
		}
		if deep {
			in.Status = Reverted
			in.Failure = nullString(r.revertReason(ctx, in, bn).Error())
		}
		return nil
	}
	expect, err := in.expect()
	if err != nil {
		return err
	}
	if missing := missingTransfer(rcpt, expect); missing != nil {
		if deep {
			in.Status = Failed
			in.Failure = nullString(fmt.Sprintf("%s: receipt lacks Transfer(%s, %s, %v) of %s", chain.TransferMissing,
				missing.From.Hex(), missing.To.Hex(), missing.Value, missing.Token.Hex()))
		}
		return nil
	}
	if deep {
		in.Status = Confirmed
		in.Failure.Valid = false
	}
	return nil
}

// canonicalReceipt returns the receipt of the first of hashes that is in a
// block of the canonical chain, or nil.
func (r *Relayer) canonicalReceipt(ctx context.Context, hashes ...common.Hash) (*types.Receipt, error) {
	seen := map[common.Hash]bool{}
	for _, h := range hashes {
		if seen[h] {
			continue
		}
		seen[h] = true
		rcpt, err := r.b.TransactionReceipt(ctx, h)
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("receipt %s: %w", h, err)
		}
		hdr, err := r.b.HeaderByNumber(ctx, rcpt.BlockNumber)
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("header %v: %w", rcpt.BlockNumber, err)
		}
		if hdr.Hash() == rcpt.BlockHash {
			return rcpt, nil
		}
	}
	return nil, nil
}

// missingTransfer returns the first expected Transfer log the receipt lacks.
func missingTransfer(rcpt *types.Receipt, expect []chain.Transfer) *chain.Transfer {
	used := make([]bool, len(rcpt.Logs))
	for i := range expect {
		e := &expect[i]
		found := false
		for j, l := range rcpt.Logs {
			if used[j] || l.Address != e.Token || len(l.Topics) != 3 || l.Topics[0] != chain.TopicTransfer {
				continue
			}
			if common.BytesToAddress(l.Topics[1].Bytes()) != e.From || common.BytesToAddress(l.Topics[2].Bytes()) != e.To {
				continue
			}
			if new(big.Int).SetBytes(l.Data).Cmp(e.Value) != 0 {
				continue
			}
			used[j], found = true, true
			break
		}
		if !found {
			return e
		}
	}
	return nil
}

// revertReason explains a reverted transaction: the same call run at its
// block usually reverts again with the reason (e.g. the plan was revoked
// just before the charge was mined).
func (r *Relayer) revertReason(ctx context.Context, in *intent, block uint64) *chain.Failure {
	to := common.HexToAddress(in.To)
	_, err := r.b.CallContract(ctx, ethereum.CallMsg{From: r.from, To: &to, Data: in.Data}, new(big.Int).SetUint64(block))
	if err != nil {
		if reason, ok := chain.RevertReason(err); ok {
			f := chain.ReasonFor(reason)
			if f.Reason == chain.SimulationFailed {
				f.Reason = chain.TransactionReverted
			}
			return f
		}
	}
	return &chain.Failure{Reason: chain.TransactionReverted}
}

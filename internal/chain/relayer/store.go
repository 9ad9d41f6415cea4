package relayer

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/store"
)

// intent is a chain_intents row.
type intent struct {
	ChainID       int64          `db:"chain_id"`
	Key           string         `db:"idempotency_key"`
	Sender        string         `db:"sender"`
	Nonce         sql.NullInt64  `db:"nonce"`
	To            string         `db:"to_address"`
	Data          []byte         `db:"data"`
	GasLimit      int64          `db:"gas_limit"`
	Expect        []byte         `db:"expect"`
	Authorization []byte         `db:"authorization_ref"`
	SearchFrom    int64          `db:"search_from"`
	Status        State          `db:"status"`
	TxHash        sql.NullString `db:"tx_hash"`
	BlockNumber   sql.NullInt64  `db:"block_number"`
	BlockHash     sql.NullString `db:"block_hash"`
	Confirmations int64          `db:"confirmations"`
	Failure       sql.NullString `db:"failure"`
}

const intentColumns = `chain_id, idempotency_key, sender, nonce, to_address, data, gas_limit, expect,
	authorization_ref, search_from, status, tx_hash, block_number, block_hash, confirmations, failure`

// attempt is a chain_transactions row.
type attempt struct {
	Hash           string        `db:"hash"`
	Attempt        int           `db:"attempt"`
	Nonce          int64         `db:"nonce"`
	Raw            []byte        `db:"raw"`
	TipCap         string        `db:"gas_tip_cap"`
	FeeCap         string        `db:"gas_fee_cap"`
	BroadcastBlock sql.NullInt64 `db:"broadcast_block"`
}

func (in *intent) expect() ([]chain.Transfer, error) {
	var out []chain.Transfer
	err := json.Unmarshal(in.Expect, &out)
	return out, err
}

func (in *intent) authorization() (*chain.AuthorizationRef, error) {
	if len(in.Authorization) == 0 || string(in.Authorization) == "null" {
		return nil, nil
	}
	var ref chain.AuthorizationRef
	if err := json.Unmarshal(in.Authorization, &ref); err != nil {
		return nil, err
	}
	return &ref, nil
}

func getIntent(ctx context.Context, q store.Querier, chainID int64, key string) (*intent, error) {
	var in intent
	err := q.GetContext(ctx, &in, `SELECT `+intentColumns+` FROM chain_intents WHERE chain_id = $1 AND idempotency_key = $2`, chainID, key)
	if store.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, store.Translate(err)
	}
	return &in, nil
}

func openIntents(ctx context.Context, q store.Querier, chainID int64, sender string) ([]intent, error) {
	var out []intent
	err := q.SelectContext(ctx, &out, `SELECT `+intentColumns+` FROM chain_intents
		WHERE chain_id = $1 AND sender = $2 AND status IN ('pending', 'mined')
		ORDER BY nonce NULLS FIRST, created_at`, chainID, sender)
	return out, store.Translate(err)
}

func attempts(ctx context.Context, q store.Querier, chainID int64, key string) ([]attempt, error) {
	var out []attempt
	err := q.SelectContext(ctx, &out, `SELECT hash, attempt, nonce, raw, gas_tip_cap, gas_fee_cap, broadcast_block
		FROM chain_transactions WHERE chain_id = $1 AND idempotency_key = $2 ORDER BY attempt DESC`, chainID, key)
	return out, store.Translate(err)
}

func insertAttempt(ctx context.Context, q store.Querier, chainID int64, key string, n int, nonce uint64, hash common.Hash, raw []byte, tip, feeCap *big.Int) error {
	_, err := q.ExecContext(ctx, `INSERT INTO chain_transactions
		(chain_id, hash, idempotency_key, attempt, nonce, raw, gas_tip_cap, gas_fee_cap)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		chainID, hex(hash), key, n, int64(nonce), raw, tip.String(), feeCap.String())
	return store.Translate(err)
}

func markBroadcast(ctx context.Context, q store.Querier, chainID int64, hash common.Hash, block uint64) error {
	_, err := q.ExecContext(ctx, `UPDATE chain_transactions SET broadcast_at = now(), broadcast_block = $3
		WHERE chain_id = $1 AND hash = $2`, chainID, hex(hash), int64(block))
	return store.Translate(err)
}

// saveState records where an intent stands after a step.
func saveState(ctx context.Context, q store.Querier, in *intent) error {
	_, err := q.ExecContext(ctx, `UPDATE chain_intents SET status = $3, tx_hash = $4, block_number = $5,
		block_hash = $6, confirmations = $7, failure = $8, updated_at = now()
		WHERE chain_id = $1 AND idempotency_key = $2`,
		in.ChainID, in.Key, in.Status, in.TxHash, in.BlockNumber, in.BlockHash, in.Confirmations, in.Failure)
	return store.Translate(err)
}

// hex is the stored form of a hash or address: lowercase 0x hex.
func hex(v interface{ Hex() string }) string { return strings.ToLower(v.Hex()) }

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
func nullInt(v uint64) sql.NullInt64     { return sql.NullInt64{Int64: int64(v), Valid: true} }

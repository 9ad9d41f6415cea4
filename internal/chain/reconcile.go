package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Event topics of USDC and PlanManager.
var (
	TopicTransfer              = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	TopicApproval              = crypto.Keccak256Hash([]byte("Approval(address,address,uint256)"))
	TopicAuthorizationUsed     = crypto.Keccak256Hash([]byte("AuthorizationUsed(address,bytes32)"))
	TopicAuthorizationCanceled = crypto.Keccak256Hash([]byte("AuthorizationCanceled(address,bytes32)"))
	TopicPlanActivated         = crypto.Keccak256Hash([]byte("PlanActivated(bytes32,address,address,address,uint256,uint256,uint256,uint256)"))
	TopicPlanCharged           = crypto.Keccak256Hash([]byte("PlanCharged(bytes32,bytes32,uint256,uint256,uint256)"))
	TopicPlanRevoked           = crypto.Keccak256Hash([]byte("PlanRevoked(bytes32,address)"))
)

// AuthorizationUse is where an EIP-3009 nonce was consumed on chain.
type AuthorizationUse struct {
	TxHash      common.Hash
	BlockNumber uint64
	BlockHash   common.Hash
	// Canceled is true when the authorizer canceled it
	// (AuthorizationCanceled) rather than a transfer using it.
	Canceled bool
}

// FindAuthorizationUse looks for the AuthorizationUsed or
// AuthorizationCanceled log of ref in blocks [from, latest], asking for at
// most maxRange blocks per eth_getLogs (nodes cap ranges; 0 means 2,000). It
// returns nil when there is none, e.g. when a reorg removed it.
func FindAuthorizationUse(ctx context.Context, b Backend, ref AuthorizationRef, from uint64, maxRange uint64) (*AuthorizationUse, error) {
	if maxRange == 0 {
		maxRange = 2000
	}
	head, err := b.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("block number: %w", err)
	}
	q := ethereum.FilterQuery{
		Addresses: []common.Address{ref.Token},
		Topics: [][]common.Hash{
			{TopicAuthorizationUsed, TopicAuthorizationCanceled},
			{common.BytesToHash(ref.Authorizer.Bytes())},
			{ref.Nonce},
		},
	}
	// Newest first: the use is usually recent.
	for hi := head; ; {
		lo := from
		if hi >= from+maxRange {
			lo = hi - maxRange + 1
		}
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(lo), new(big.Int).SetUint64(hi)
		logs, err := b.FilterLogs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("eth_getLogs %d-%d: %w", lo, hi, err)
		}
		for i := len(logs) - 1; i >= 0; i-- {
			l := logs[i]
			if l.Removed {
				continue
			}
			return &AuthorizationUse{TxHash: l.TxHash, BlockNumber: l.BlockNumber, BlockHash: l.BlockHash,
				Canceled: l.Topics[0] == TopicAuthorizationCanceled}, nil
		}
		if lo <= from {
			return nil, nil
		}
		hi = lo - 1
	}
}

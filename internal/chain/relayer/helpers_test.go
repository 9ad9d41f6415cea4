package relayer

import (
	"crypto/ecdsa"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

func contains[T comparable](s []T, v T) bool { return slices.Contains(s, v) }

func unix(s uint64) time.Time { return time.Unix(int64(s), 0) }

// resign returns a with a new validity window, signed again by k.
func (e *env) resign(k *ecdsa.PrivateKey, a chain.TransferAuthorization, after, before uint64) chain.TransferAuthorization {
	e.t.Helper()
	a.ValidAfter, a.ValidBefore = new(big.Int).SetUint64(after), new(big.Int).SetUint64(before)
	d, err := e.token.Domain(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if a.Signature, err = chain.SignTypedData(k, chain.TransferTypedData(d, a)); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// highS returns the other valid-looking form of sig (s' = n - s, v
// flipped), which ecrecover accepts but USDC and tollgate refuse.
func highS(sig []byte) []byte {
	out := append([]byte(nil), sig...)
	s := new(big.Int).SetBytes(sig[32:64])
	s.Sub(crypto.S256().Params().N, s)
	copy(out[32:64], s.FillBytes(make([]byte, 32)))
	if out[64] == 27 {
		out[64] = 28
	} else {
		out[64] = 27
	}
	return out
}

// fund gives a some ETH from the deployer.
func (e *env) fund(a common.Address) {
	e.t.Helper()
	nonce, err := e.c.PendingNonceAt(e.ctx, addr(e.deployer))
	if err != nil {
		e.t.Fatal(err)
	}
	head := e.head()
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: big.NewInt(1e9),
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(3)), big.NewInt(1e9)), Gas: 21000, To: &a,
		Value: big.NewInt(1e18)}), types.LatestSignerForChainID(e.chainID), e.deployer)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SendTransaction(e.ctx, tx); err != nil {
		e.t.Fatal(err)
	}
	e.sim.Commit()
}

// adjust moves the chain's time forward by d in a new empty block; fork
// rewinds the head to h.
func (e *env) adjust(d time.Duration) { e.t.Helper(); chaintest.AdjustTime(e.t, e.sim, d) }
func (e *env) fork(h common.Hash)     { e.t.Helper(); chaintest.Fork(e.t, e.sim, h) }

// signAtNonce signs a transaction from k with an explicit nonce.
func (e *env) signAtNonce(k *ecdsa.PrivateKey, nonce uint64, to common.Address, data []byte, tip *big.Int) *types.Transaction {
	e.t.Helper()
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: e.chainID, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(e.head().BaseFee, big.NewInt(3)), tip), Gas: 200_000, To: &to, Data: data}),
		types.LatestSignerForChainID(e.chainID), k)
	if err != nil {
		e.t.Fatal(err)
	}
	return tx
}

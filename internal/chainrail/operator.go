package chainrail

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// Dial connects to a node's JSON-RPC endpoint (http, https, ws or wss).
func Dial(ctx context.Context, url string) (*ethclient.Client, error) {
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("chain RPC %s: %w", url, err)
	}
	return c, nil
}

// LoadKey reads a private key file: 64 hex digits (an optional 0x and
// surrounding whitespace allowed), as `cast wallet new` or geth print it.
func LoadKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	s := strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")
	k, err := crypto.HexToECDSA(s)
	if err != nil {
		return nil, fmt.Errorf("key file %s: not a hex secp256k1 private key", path)
	}
	return k, nil
}

// Status is what `admin chain status` and /metrics report.
type Status struct {
	ChainID     uint64
	Network     string
	Head        uint64
	Relayer     common.Address
	BalanceWei  *big.Int
	LowBalance  bool
	Pending     int
	Token       common.Address
	PlanManager *common.Address
}

// Status reads the chain id, the head, the relayer's balance and how many of
// its transactions are not final. It fails when the node or the database
// cannot be reached.
func (r *Rail) Status(ctx context.Context) (Status, error) {
	head, err := r.b.BlockNumber(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("chain head: %w", err)
	}
	bal, low, err := r.relayer.Balance(ctx)
	if err != nil {
		return Status{}, err
	}
	pending, err := r.relayer.Pending(ctx)
	if err != nil {
		return Status{}, err
	}
	st := Status{ChainID: uint64(r.chainID), Network: r.network, Head: head, Relayer: r.relayer.Address(), BalanceWei: bal,
		LowBalance: low, Pending: pending, Token: r.token.Address}
	if r.plans != nil {
		a := r.plans.Address
		st.PlanManager = &a
	}
	return st, nil
}

// DeployPlanManager deploys PlanManager from key's account with operator as
// its operator (the relayer's address), waits until it is mined, and
// returns its address and the deployment's transaction hash.
func DeployPlanManager(ctx context.Context, b chain.Backend, key *ecdsa.PrivateKey, operator common.Address) (common.Address, common.Hash, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return common.Address{}, common.Hash{}, fmt.Errorf("chain id: %w", err)
	}
	opts := bind.NewKeyedTransactor(key, id)
	opts.Context = ctx
	addr, tx, err := bind.DeployContract(opts, common.FromHex(contracts.PlanManagerMetaData.Bin), b,
		contracts.NewPlanManager().PackConstructor(operator))
	if err != nil {
		return common.Address{}, common.Hash{}, fmt.Errorf("deploy PlanManager: %w", err)
	}
	if _, err := bind.WaitDeployed(ctx, b, tx.Hash()); err != nil {
		return common.Address{}, tx.Hash(), fmt.Errorf("deploy PlanManager: waiting for %s: %w", tx.Hash(), err)
	}
	return addr, tx.Hash(), nil
}

// Verifier checks a settlement wallet's signature on the chain: ECDSA for
// an externally owned account, ERC-1271 isValidSignature through eth_call
// for a smart-contract wallet (an address with code). It is the
// wallet.Verifier of `admin wallet set` when a chain is configured.
type Verifier struct{ B chain.Backend }

var _ wallet.Verifier = Verifier{}

// Verify returns nil when sig is signer's over digest, invalid_request
// naming `signature` when it is not, and a plain error when the node cannot
// be asked.
func (v Verifier) Verify(ctx context.Context, signer common.Address, digest common.Hash, sig []byte) error {
	code, err := v.B.CodeAt(ctx, signer, nil)
	if err != nil {
		return fmt.Errorf("code of %s: %w", signer.Hex(), err)
	}
	if len(code) == 0 {
		return wallet.ECDSA{}.Verify(ctx, signer, digest, sig)
	}
	err = chain.VerifySignature(ctx, v.B, signer, digest, sig)
	var f *chain.Failure
	if errors.As(err, &f) {
		return apperr.Field("signature", "is not accepted by the wallet contract %s (ERC-1271 isValidSignature)", signer.Hex())
	}
	return err
}

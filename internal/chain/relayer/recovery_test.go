package relayer

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// TestReorgNeverConfirmsFlippedSettlement: the transfer is mined, then a
// longer fork replaces its block with one where the payer canceled the
// authorization. The settlement must never be confirmed, and ends failed.
func TestReorgNeverConfirmsFlippedSettlement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Confirmations: 3})
	a := e.authorize(e.payer, addr(e.merchant), 15_000_000, "inv_reorg")
	if _, err := e.r.Submit(e.ctx, "inv_reorg", e.token.TransferCall(a)); err != nil {
		t.Fatal(err)
	}
	parent := e.head().Hash()
	e.sim.Commit()
	if _, err := e.r.Step(e.ctx); err != nil {
		t.Fatal(err)
	}
	s, err := e.r.Status(e.ctx, "inv_reorg")
	if err != nil {
		t.Fatal(err)
	}
	if s.State != Mined || s.Confirmations != 1 {
		t.Fatalf("before the reorg: %+v", s)
	}
	if got := e.usdc(addr(e.merchant)); got != 15_000_000 {
		t.Fatalf("the transfer did not run: merchant has %d", got)
	}

	// The fork: from the parent of the transfer's block, the payer's
	// cancelAuthorization (relayed by someone with ETH), made longer.
	e.fork(parent)
	d, _ := e.token.Domain(e.ctx)
	csig, err := chain.SignTypedData(e.payer, chain.CancelTypedData(d, addr(e.payer), a.Nonce))
	if err != nil {
		t.Fatal(err)
	}
	e.sendAs(e.deployer, e.token.Address, e.tok.PackCancelAuthorization0(addr(e.payer), a.Nonce, csig), big.NewInt(100e9))
	e.sim.Commit()
	e.sim.Commit()
	if e.head().Number.Uint64() <= s.BlockNumber {
		t.Fatal("the fork is not longer")
	}

	final, states := e.settle("inv_reorg")
	if contains(states, Confirmed) || final.State == Confirmed {
		t.Fatalf("a flipped settlement was confirmed: %v", states)
	}
	if final.State != Failed || !strings.Contains(final.Failure, string(chain.AuthorizationCanceled)) {
		t.Fatalf("final %+v, want failed: authorization_canceled", final)
	}
	if got := e.usdc(addr(e.merchant)); got != 0 {
		t.Fatalf("merchant has %d on the canonical chain", got)
	}
}

// TestReorgDropsMinedBackToPending: a mined transaction whose block is
// reorganised away is pending again, then confirmed on the new chain.
func TestReorgDropsMinedBackToPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Confirmations: 2})
	a := e.authorize(e.payer, addr(e.merchant), 3_000_000, "inv_drop")
	if _, err := e.r.Submit(e.ctx, "inv_drop", e.token.TransferCall(a)); err != nil {
		t.Fatal(err)
	}
	parent := e.head().Hash()
	e.sim.Commit()
	if _, err := e.r.Step(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.fork(parent)
	changed, err := e.r.Step(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || changed[0].State != Pending {
		t.Fatalf("after the reorg, step reported %+v; want inv_drop pending", changed)
	}
	final, _ := e.settle("inv_drop")
	if final.State != Confirmed {
		t.Fatalf("final %+v", final)
	}
}

// TestKilledBetweenSignAndBroadcast: a relayer dies after storing a signed
// transaction and before sending it. A new relayer over the same table
// sends the stored bytes; it signs nothing new.
func TestKilledBetweenSignAndBroadcast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	a := e.authorize(e.payer, addr(e.merchant), 4_000_000, "inv_kill")
	e.r.afterStore = func() error { return errKilled }
	if _, err := e.r.Submit(e.ctx, "inv_kill", e.token.TransferCall(a)); !errors.Is(err, errKilled) {
		t.Fatalf("submit: %v", err)
	}
	var stored []attempt
	if err := e.db.Select(&stored, `SELECT hash, attempt, nonce, raw, gas_tip_cap, gas_fee_cap, broadcast_block FROM chain_transactions`); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 {
		t.Fatalf("%d stored transactions, want 1", len(stored))
	}
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(stored[0].Raw); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.TransactionByHash(e.ctx, tx.Hash()); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the node knows the transaction already: %v", err)
	}

	r2, err := New(e.ctx, e.db, e.c, e.relayKey, Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.r = r2
	final, _ := e.settle("inv_kill")
	if final.State != Confirmed || final.TxHash != tx.Hash() {
		t.Fatalf("final %+v, want confirmed as the stored %s", final, tx.Hash())
	}
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM chain_transactions`); err != nil || n != 1 {
		t.Fatalf("%d transactions stored (%v): the restart signed again", n, err)
	}
}

// TestStuckTransactionReplaced: a transaction bidding below what the block
// builder takes waits; after StuckBlocks it is replaced (same nonce, higher
// tip), and the replacement settles.
func TestStuckTransactionReplaced(t *testing.T) {
	t.Parallel()
	minTip := big.NewInt(2e9)
	e := newEnv(t, Config{StuckBlocks: 2, FirstTip: big.NewInt(1e9)}, simulated.WithMinerMinTip(minTip))
	a := e.authorize(e.payer, addr(e.merchant), 6_000_000, "inv_stuck")
	s, err := e.r.Submit(e.ctx, "inv_stuck", e.token.TransferCall(a))
	if err != nil {
		t.Fatal(err)
	}
	final, states := e.settle("inv_stuck")
	if final.State != Confirmed {
		t.Fatalf("final %+v (states %v)", final, states)
	}
	var atts []attempt
	if err := e.db.Select(&atts, `SELECT hash, attempt, nonce, raw, gas_tip_cap, gas_fee_cap, broadcast_block
		FROM chain_transactions ORDER BY attempt`); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d attempts", len(atts))
	if len(atts) < 2 {
		t.Fatalf("%d attempts: never replaced", len(atts))
	}
	for _, x := range atts {
		if uint64(x.Nonce) != *s.Nonce {
			t.Fatalf("attempt %d has nonce %d, want %d", x.Attempt, x.Nonce, *s.Nonce)
		}
	}
	if final.TxHash.Hex() == atts[0].Hash || strings.EqualFold(final.TxHash.Hex(), atts[0].Hash) {
		t.Fatal("the stuck first attempt was mined")
	}
	tip := e.receiptTx(final.TxHash).GasTipCap()
	if tip.Cmp(minTip) < 0 {
		t.Fatalf("mined with tip %v below the builder's %v", tip, minTip)
	}
}

func (e *env) receiptTx(h [32]byte) *types.Transaction {
	e.t.Helper()
	tx, _, err := e.c.TransactionByHash(e.ctx, h)
	if err != nil {
		e.t.Fatal(err)
	}
	return tx
}

// TestForeignTransferReorgedAway: we tracked someone else's transfer of
// the payer's authorization; a reorg removes it for good, so the relayer
// sends the authorization itself.
func TestForeignTransferReorgedAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Confirmations: 2})
	a := e.authorize(e.payer, addr(e.merchant), 2_000_000, "inv_gone")
	call := e.token.TransferCall(a)
	parent := e.head().Hash()
	theirs := e.sendAs(e.deployer, call.To, call.Data, big.NewInt(1e9))
	e.sim.Commit()
	s, err := e.r.Submit(e.ctx, "inv_gone", call)
	if err != nil {
		t.Fatal(err)
	}
	if s.TxHash != theirs.Hash() || s.Nonce != nil {
		t.Fatalf("submit %+v: want tracking %s", s, theirs.Hash())
	}
	// The fork drops their block; a transaction of theirs with the same
	// nonce and a far higher tip makes sure the transfer never returns.
	e.fork(parent)
	chaintest.Poll(t, func() error {
		return e.c.SendTransaction(e.ctx, e.signAtNonce(e.deployer, theirs.Nonce(), addr(e.deployer), nil, big.NewInt(500e9)))
	})
	e.sim.Commit()
	e.sim.Commit()
	final, states := e.settle("inv_gone")
	if final.State != Confirmed || final.TxHash == theirs.Hash() || final.Nonce == nil {
		t.Fatalf("final %+v (states %v): want confirmed by our own transaction", final, states)
	}
	if got := e.usdc(addr(e.merchant)); got != 2_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}

// TestKilledThenRelayedElsewhere: the relayer dies before broadcasting, and
// meanwhile someone else relays the payer's authorization. The restarted
// relayer settles on their transfer, and still sends its stored
// transaction so its nonce sequence has no gap: the next payment goes
// through.
func TestKilledThenRelayedElsewhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	a := e.authorize(e.payer, addr(e.merchant), 4_000_000, "inv_k2")
	call := e.token.TransferCall(a)
	e.r.afterStore = func() error { return errKilled }
	if _, err := e.r.Submit(e.ctx, "inv_k2", call); !errors.Is(err, errKilled) {
		t.Fatalf("submit: %v", err)
	}
	theirs := e.sendAs(e.deployer, call.To, call.Data, big.NewInt(1e9))
	e.sim.Commit()

	r2, err := New(e.ctx, e.db, e.c, e.relayKey, Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.r = r2
	final, _ := e.settle("inv_k2")
	if final.State != Confirmed || final.TxHash != theirs.Hash() {
		t.Fatalf("final %+v, want confirmed by their %s", final, theirs.Hash())
	}
	next := e.authorize(e.payer, addr(e.merchant), 1_000_000, "inv_k3")
	if _, err := e.r.Submit(e.ctx, "inv_k3", e.token.TransferCall(next)); err != nil {
		t.Fatal(err)
	}
	if s, states := e.settle("inv_k3"); s.State != Confirmed {
		t.Fatalf("the next payment is stuck behind a nonce gap: %+v %v", s, states)
	}
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}

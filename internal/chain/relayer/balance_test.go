package relayer

import (
	"math/big"
	"testing"
)

// TestLowBalance: the relayer's balance is refreshed by each step and
// flagged when under the low mark, for the daemon's /metrics.
func TestLowBalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	if bal, _ := e.r.LastBalance(); bal != nil {
		t.Fatal("a balance before any step")
	}
	if _, err := e.r.Step(e.ctx); err != nil {
		t.Fatal(err)
	}
	bal, low := e.r.LastBalance()
	if bal == nil || bal.Cmp(e.eth(e.r.Address())) != 0 || low {
		t.Fatalf("balance %v low %v", bal, low)
	}
	// The same key with a mark above what it holds.
	mark := new(big.Int).Add(bal, big.NewInt(1))
	r2, err := New(e.ctx, e.db, e.c, e.relayKey, Config{LowBalance: mark})
	if err != nil {
		t.Fatal(err)
	}
	if _, low, err := r2.Balance(e.ctx); err != nil || !low {
		t.Fatalf("low = %v (%v), want true", low, err)
	}
	if n, err := r2.Pending(e.ctx); err != nil || n != 0 {
		t.Fatalf("pending %d %v", n, err)
	}
}

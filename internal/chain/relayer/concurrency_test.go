package relayer

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// TestReplicasShareOneNonceSequence: two relayer instances (two daemon
// replicas) with the same key submit at once. Every nonce is used once, with
// no gap, the same key submitted by both is one transaction, and every
// settlement confirms.
func TestReplicasShareOneNonceSequence(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	r2, err := New(e.ctx, e.db, e.c, e.relayKey, Config{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	auths := make([]chain.TransferAuthorization, n)
	for i := range auths {
		auths[i] = e.authorize(e.payer, addr(e.merchant), 1_000, fmt.Sprintf("inv_c%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for _, r := range []*Relayer{e.r, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, a := range auths {
				if _, err := r.Submit(e.ctx, fmt.Sprintf("inv_c%d", i), e.token.TransferCall(a)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var nonces []int64
	if err := e.db.Select(&nonces, `SELECT nonce FROM chain_intents ORDER BY nonce`); err != nil {
		t.Fatal(err)
	}
	if len(nonces) != n {
		t.Fatalf("%d intents for %d keys", len(nonces), n)
	}
	sort.Slice(nonces, func(i, j int) bool { return nonces[i] < nonces[j] })
	for i := 1; i < len(nonces); i++ {
		if nonces[i] != nonces[i-1]+1 {
			t.Fatalf("nonces %v have a gap or a repeat", nonces)
		}
	}
	for i := range auths {
		if s, _ := e.settle(fmt.Sprintf("inv_c%d", i)); s.State != Confirmed {
			t.Fatalf("inv_c%d: %+v", i, s)
		}
	}
	if got := e.usdc(addr(e.merchant)); got != n*1_000 {
		t.Fatalf("merchant has %d", got)
	}
}

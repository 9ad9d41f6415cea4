package chainrail_test

import (
	"context"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
	"github.com/tollgatehq/tollgate/internal/chainrail"
)

// TestBlockClock: the chain's clock is the newest block's time, and
// follows a block mined a month later in the chain's time.
func TestBlockClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim := simulated.NewBackend(types.GenesisAlloc{})
	t.Cleanup(func() { sim.Close() })
	c := sim.Client()
	sim.Commit()
	clk, err := chainrail.NewBlockClock(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	head := func() time.Time {
		h, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(int64(h.Time), 0)
	}
	if got := clk.Now(); !got.Equal(head()) {
		t.Fatalf("Now %v, head %v", got, head())
	}
	start := clk.Now()
	chaintest.AdjustTime(t, sim, 30*24*time.Hour)
	want := head()
	if want.Sub(start) < 30*24*time.Hour {
		t.Fatalf("the chain moved %v", want.Sub(start))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !clk.Now().Equal(want) {
		if time.Now().After(deadline) {
			t.Fatalf("Now %v, not the new head's %v", clk.Now(), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !chainrail.DevChain(31337) || !chainrail.DevChain(1337) || chainrail.DevChain(1) || chainrail.DevChain(8453) {
		t.Fatal("dev chains are 31337 and 1337 only")
	}
}

// Package chaintest holds what tests on the simulated chain share.
package chaintest

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Chain is what these helpers need of go-ethereum's simulated backend
// (*simulated.Backend). Naming the methods instead of the type keeps the
// simulated chain out of every non-test file: only _test.go files import it.
type Chain interface {
	AdjustTime(d time.Duration) error
	Fork(parent common.Hash) error
}

// AdjustTime moves the simulated chain's time forward by d in a new empty
// block. The transaction pool learns of the last block asynchronously, so
// right after a Commit it may still look non-empty for a moment: poll.
func AdjustTime(t testing.TB, sim Chain, d time.Duration) {
	t.Helper()
	Poll(t, func() error { return sim.AdjustTime(d) })
}

// Fork rewinds the simulated chain's head to h; like AdjustTime, it needs
// the pool to have caught up.
func Fork(t testing.TB, sim Chain, h common.Hash) {
	t.Helper()
	Poll(t, func() error { return sim.Fork(h) })
}

// Poll calls f until it succeeds, failing t after ten seconds.
func Poll(t testing.TB, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

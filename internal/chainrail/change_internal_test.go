package chainrail

import (
	"testing"
	"time"
)

// TestChangeStart: a changed plan's start puts the change (mined within
// submitSlack) and the subscription's renewal in different contract
// periods, each later renewal (at least a contract period after the one
// before) in a new one, and never starts after the change. Calendar months
// (28-day contract periods under 28- to 31-day subscription periods) and
// the last minutes of a period included.
func TestChangeStart(t *testing.T) {
	const day = 24 * 60 * 60
	head := uint64(1_800_000_000)
	for _, c := range []struct {
		period uint64
		gaps   []uint64 // the subscription's next periods, in seconds
	}{
		{7 * day, []uint64{7 * day, 7 * day, 7 * day}},
		{28 * day, []uint64{31 * day, 28 * day, 31 * day, 30 * day}},
		{day, []uint64{day, day}},
		{365 * day, []uint64{366 * day, 365 * day}},
	} {
		for _, until := range []uint64{2 * 60, 59 * 60, 2 * 3600, c.period / 2, c.period - 1, c.period + 3*day} {
			if until > c.gaps[0] {
				continue // a subscription period is never longer than its first gap here
			}
			start := changeStart(head, until, c.period)
			if start > head {
				t.Fatalf("period %d, until %d: start %d after head %d", c.period, until, start, head)
			}
			idx := func(at uint64) uint64 { return (at - start) / c.period }
			prev := idx(head + uint64(submitSlack/time.Second))
			renewal := head + until
			for i, gap := range append([]uint64{0}, c.gaps...) {
				renewal += gap
				if got := idx(renewal); got <= prev {
					t.Fatalf("period %d, until %d: charge %d at index %d, not after %d", c.period, until, i, got, prev)
				} else {
					prev = got
				}
			}
		}
	}
}

package money

import (
	"math"
	"testing"
)

func TestProrate(t *testing.T) {
	for _, c := range []struct {
		a         Amount
		num, den  int64
		want      Amount
		wantError bool
	}{
		{10_000_000, 15 * 86400, 30 * 86400, 5_000_000, false},
		{1, 1, 2, 1, false},   // half rounds up
		{-1, 1, 2, -1, false}, // on the magnitude
		{1, 1, 3, 0, false},
		{2, 1, 3, 1, false},
		{5_000_000, 1, 2_592_000, 2, false}, // 1.929 → 2
		{math.MaxInt64, 1, 1, math.MaxInt64, false},
		{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64 - 1, false},
		{7, 0, 10, 0, false},
		{7, 11, 10, 0, true},
		{7, 1, 0, 0, true},
	} {
		got, err := Prorate(c.a, c.num, c.den)
		if (err != nil) != c.wantError || got != c.want {
			t.Errorf("Prorate(%d, %d, %d) = %d, %v; want %d", c.a, c.num, c.den, got, err, c.want)
		}
	}
}

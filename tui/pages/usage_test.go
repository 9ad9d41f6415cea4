package pages

import (
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestSparkline(t *testing.T) {
	ws := func(vs ...string) []client.UsageWindow {
		out := make([]client.UsageWindow, len(vs))
		for i, v := range vs {
			out[i].Value = v
		}
		return out
	}
	for _, tc := range []struct {
		in   []client.UsageWindow
		want string
	}{
		{ws("0", "0"), "▁▁"},
		{ws("0", "1", "7"), "▁▂█"},
		{ws("100000000000000000000000", "1"), "█▂"},
		{ws("3", "bad"), "█▁"},
		{nil, ""},
	} {
		if got := Sparkline(tc.in); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.in, got, tc.want)
		}
	}
}

package cmd

import (
	"strings"
	"testing"
)

// `tui` checks its replay flags like `events tail` does, and refuses to run
// without a terminal instead of drawing into a pipe.
func TestTUIFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tui", "--api-key", "sk_test_x", "--forward-to", "http://localhost:3000"}, "--forward-to needs --secret"},
		{[]string{"tui", "--api-key", "sk_test_x", "--forward-to", "localhost:3000", "--secret", "whsec_x"}, "http:// or https://"},
		{[]string{"tui", "--api-key", "sk_test_x"}, "tui needs a terminal"},
		{[]string{"tui", "extra"}, "unknown command"},
	} {
		res := cliRun(t, nil, tc.args...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}

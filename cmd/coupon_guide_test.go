package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCouponsGuideRunsAsWritten runs the coupons walkthrough of the
// subscriptions guide with sh, the built binary and jq against a daemon in
// test mode: the launch coupon discounts two weeks with discount lines, the
// goodwill coupon one renewal, and an unknown code is invalid_coupon.
func TestCouponsGuideRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tollgate binary")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the guide uses jq")
	}
	t.Parallel()
	text := runGuide(t, startUsageAPI(t), guideScript(t, "subscriptions.md", "### Worked example: a launch discount and a goodwill credit"))
	for _, want := range []string{"\n8000000 plan=10000000 discount=-2000000\n", "\n10000000 8000000 8000000\n", "\nnull\n",
		"\n5000000\nTest clock advanced", "invalid_coupon", "LAUNCH", "SORRY-5"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	// The upcoming charge and then the renewal: 5 USDC each.
	if n := strings.Count(text, "\n5000000\n"); n != 2 {
		t.Fatalf("%d lines of 5000000, want 2:\n%s", n, text)
	}
}

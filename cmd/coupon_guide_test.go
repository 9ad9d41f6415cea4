package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
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
	api := startUsageAPI(t)
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "tollgate"), "github.com/tollgatehq/tollgate/cmd/tollgate").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sh := exec.Command("sh", "-e", "-c", guideScript(t, "subscriptions.md", "### Worked example: a launch discount and a goodwill credit"))
	home := t.TempDir()
	sh.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "HOME="+home, "XDG_CONFIG_HOME="+home,
		"TOLLGATE_API_URL="+api.url, "TOLLGATE_API_KEY="+api.key, "NO_COLOR=1")
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's example failed: %v\n%s", err, out)
	}
	text := string(out)
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

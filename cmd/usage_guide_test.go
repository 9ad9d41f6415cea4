package cmd

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// usageGuideScript is the sh block of the usage guide's section on usage
// summaries, alerts and corrections.
func usageGuideScript(t *testing.T) string {
	return guideScript(t, "usage.md", "## Seeing usage, alerts and corrections")
}

// guideScript is the first sh block under the heading (a line of its own)
// of a guide.
func guideScript(t *testing.T, guide, heading string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("help", guide))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	section, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
			section = l == heading
		case section && strings.HasPrefix(l, "```sh"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			return b.String()
		case in:
			b.WriteString(l + "\n")
		}
	}
	t.Fatalf("%s has no sh block under %s", guide, heading)
	return ""
}

// runGuide runs a guide's script with sh, the built binary and jq against
// api, and returns its output.
func runGuide(t *testing.T, api *usageAPI, script string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "tollgate"), "github.com/tollgatehq/tollgate/cmd/tollgate").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sh := exec.Command("sh", "-e", "-c", script)
	home := t.TempDir()
	sh.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "HOME="+home, "XDG_CONFIG_HOME="+home,
		"TOLLGATE_API_URL="+api.url, "TOLLGATE_API_KEY="+api.key, "NO_COLOR=1")
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's example failed: %v\n%s", err, out)
	}
	return string(out)
}

// TestUsageGuideRunsAsWritten runs the guide's example with sh, the built
// binary and jq against a daemon in test mode: the usage is drawn, the
// cancelled call no longer counts, and the alert fires once.
func TestUsageGuideRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tollgate binary")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the guide uses jq")
	}
	t.Parallel()
	api := startUsageAPI(t)
	text := runGuide(t, api, usageGuideScript(t))
	if !regexp.MustCompile(`Value:\s+4\n`).MatchString(text) {
		t.Fatalf("the usage is not 4 before the cancel:\n%s", text)
	}
	for _, want := range []string{"Created alert alert_", "Usage of api_calls by cus_", "Aggregation:  count", "█", "Cancelled meter event me_", "\n3\n"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := api.db.GetContext(context.Background(), &n, `SELECT count(*) FROM events WHERE type = 'alert.triggered'`); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if n > 1 || time.Now().After(deadline) {
			t.Fatalf("%d alert.triggered events\n%s", n, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := run(args...)
		if code != 0 || !strings.HasPrefix(out, "tollgate ") || !strings.Contains(out, "commit ") || !strings.Contains(out, "built ") {
			t.Fatalf("%v: %d %q", args, code, out)
		}
	}
	code, out, _ := run("version", "--json")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["version"] == "" || v["commit"] == "" || v["date"] == "" {
		t.Fatalf("version --json: %q", out)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"bogus"}, {"invoice", "create", "--bogus-flag"}, {"admin", "key", "revoke"}} {
		if code, out, errOut := run(args...); code != ExitUsage || out != "" || errOut == "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

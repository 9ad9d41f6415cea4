package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/cmd/help"
)

// Every guide under cmd/help is a topic of `tollgate help`: listed with its
// summary after the commands, printed as plain text by name, and as its
// Markdown with --raw. An unknown topic is a usage error that lists them.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("help", "*.md"))
	if err != nil || len(files) < 10 {
		t.Fatalf("guides under cmd/help: %v (%v)", files, err)
	}
	list := cliRun(t, nil, "help")
	if list.code != ExitOK || !strings.Contains(list.stdout, "Available Commands:") {
		t.Fatalf("tollgate help: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	guides := strings.Index(list.stdout, "\nGuides:\n")
	if guides < 0 || guides < strings.Index(list.stdout, "Available Commands:") {
		t.Fatalf("tollgate help lists no guides after the commands:\n%s", list.stdout)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var topic help.Topic
		for _, tp := range help.Topics() {
			if tp.Name == name {
				topic = tp
			}
		}
		if topic.Title == "" || topic.Summary == "" || len(topic.Summary) > 64 {
			t.Errorf("%s: title %q and summary %q; want a # heading and a one-line paragraph under it (at most 64 characters, for an 80-column list)", f, topic.Title, topic.Summary)
		}
		if !strings.Contains(list.stdout[guides:], "  "+name+" ") || !strings.Contains(list.stdout[guides:], topic.Summary) {
			t.Errorf("tollgate help does not list %s with its summary", name)
		}
		res := cliRun(t, nil, "help", name)
		if res.code != ExitOK || !strings.HasPrefix(res.stdout, topic.Title+"\n===") || res.stderr != "" {
			t.Errorf("tollgate help %s: exit %d, stderr %q, starts %.80q", name, res.code, res.stderr, res.stdout)
		}
		if strings.Contains(res.stdout, "```") || strings.Contains(res.stdout, "](") {
			t.Errorf("tollgate help %s prints Markdown fences or links", name)
		}
		raw := cliRun(t, nil, "help", name, "--raw")
		if raw.code != ExitOK || raw.stdout != string(src) {
			t.Errorf("tollgate help %s --raw: exit %d, not the file's Markdown", name, raw.code)
		}
	}

	res := cliRun(t, nil, "help", "no-such-topic")
	if res.code != ExitUsage || !strings.Contains(res.stderr, "Guides:") || !strings.Contains(res.stderr, `"no-such-topic"`) {
		t.Errorf("tollgate help no-such-topic: exit %d, stderr %q", res.code, res.stderr)
	}
	// A command's help is still there, under help and --help alike.
	res = cliRun(t, nil, "help", "invoice", "create")
	if res.code != ExitOK || !strings.Contains(res.stdout, "--amount") {
		t.Errorf("tollgate help invoice create: exit %d\n%s", res.code, res.stdout)
	}
	// Only the root's help lists the guides.
	res = cliRun(t, nil, "invoice", "--help")
	if strings.Contains(res.stdout, "Guides:") {
		t.Errorf("tollgate invoice --help lists the guides")
	}
}

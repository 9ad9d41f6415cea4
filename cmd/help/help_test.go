package help

import (
	"strings"
	"testing"
)

func TestHelpPlainRendering(t *testing.T) {
	t.Parallel()
	src := "# Title\n\nSummary line.\n\n## Part\n\nSee [usage](usage.md), [the flags](configuration.md#rate-limits),\n" +
		"[the map](../../internal/README.md) and **this**.\n\n```sh\ntollgate serve\n```\n\n| a | b |\n|---|---|\n| `x\\|y` | two |\n"
	want := "Title\n=====\n\nSummary line.\n\nPart\n----\n\nSee `tollgate help usage`, the flags (`tollgate help configuration`),\n" +
		"the map (the repository's internal/README.md) and this.\n\n    tollgate serve\n\n  a      b\n  ----------\n  `x|y`  two\n"
	if got := Plain(src); got != want {
		t.Errorf("Plain:\n%s\nwant:\n%s", got, want)
	}
	if title, summary := heading(src); title != "Title" || summary != "Summary line." {
		t.Errorf("heading: %q, %q", title, summary)
	}
}

func TestHelpGuideNames(t *testing.T) {
	t.Parallel()
	topics := Topics()
	if len(topics) == 0 || topics[0].Name != "quickstart" {
		t.Fatalf("topics %v: want quickstart first", topics)
	}
	for _, name := range []string{"", "../README", "payments.md", "nope"} {
		if _, ok := Guide(name); ok {
			t.Errorf("Guide(%q) found a guide", name)
		}
	}
	if src, ok := Guide("payments"); !ok || !strings.HasPrefix(src, "# ") {
		t.Errorf("Guide(payments): %v", ok)
	}
}

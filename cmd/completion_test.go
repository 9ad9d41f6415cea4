package cmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCompletions = flag.Bool("update-completions", false, "rewrite completions/ from the command tree")

// TestCompletionScripts fails when the scripts in completions/ differ from
// what the command tree generates; `go generate ./cmd` runs it with
// -update-completions to rewrite them.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	root := NewRootCmd(NewFactory(&IO{}))
	for shell, name := range completionFiles {
		var want bytes.Buffer
		if err := writeCompletion(root, shell, &want, true); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "completions", name)
		if *updateCompletions {
			if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("completions/%s is stale or missing; regenerate with: go generate ./cmd", name)
		}
	}
}

func TestCompletionCommand(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{
		"bash": "__start_tollgate", "zsh": "#compdef tollgate", "fish": "complete -c tollgate", "powershell": "Register-ArgumentCompleter",
	} {
		res := cliRun(t, nil, "completion", shell)
		if res.code != 0 || res.stderr != "" || !strings.Contains(res.stdout, marker) {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes without %q", shell, res.code, res.stderr, len(res.stdout), marker)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if res := cliRun(t, nil, args...); res.code != ExitUsage || res.stdout != "" {
			t.Errorf("%v: exit %d, stdout %d bytes; want a usage error", args, res.code, len(res.stdout))
		}
	}
}

// TestDynamicCompletion checks what the scripts ask the binary for: flag
// values and subcommands come from the live command tree.
func TestDynamicCompletion(t *testing.T) {
	t.Parallel()
	res := cliRun(t, nil, "__complete", "meter", "create", "--aggregation", "")
	for _, want := range []string{"sum", "count", "max", "last"} {
		if !strings.Contains(res.stdout, want+"\n") {
			t.Errorf("--aggregation completions %q lack %s", res.stdout, want)
		}
	}
	res = cliRun(t, nil, "__complete", "invoice", "")
	if !strings.Contains(res.stdout, "create\t") || !strings.Contains(res.stdout, "list\t") {
		t.Errorf("invoice subcommands: %q", res.stdout)
	}
}

package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// groupPaths lists every command group below the root, as arguments.
func groupPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		if !sub.HasSubCommands() || sub.Hidden {
			continue
		}
		path := append(append([]string(nil), prefix...), sub.Name())
		out = append(out, path)
		out = append(out, groupPaths(sub, path)...)
	}
	return out
}

// An unknown subcommand under any group is a usage error, as it is at the
// top level; the group alone prints its help.
func TestUnknownSubcommandOfEveryGroup(t *testing.T) {
	t.Parallel()
	groups := groupPaths(NewRootCmd(NewFactory(&IO{})), nil)
	if len(groups) < 8 {
		t.Fatalf("found only %d groups: %v", len(groups), groups)
	}
	for _, g := range append(groups, []string{}) {
		name := "tollgate " + strings.Join(g, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := cliRun(t, nil, append(g, "frobnicate", "inv_x")...)
			want := `tollgate: unknown command "frobnicate" for "` + strings.TrimSpace(name) + `"`
			if res.code != ExitUsage || res.stdout != "" || !strings.HasPrefix(res.stderr, want) {
				t.Errorf("%s frobnicate: exit %d, stdout %q, stderr %q; want exit 2 and %s", name, res.code, res.stdout, res.stderr, want)
			}
			if len(g) == 0 {
				return
			}
			res = cliRun(t, nil, g...)
			if res.code != ExitOK || !strings.Contains(res.stdout, "Available Commands:") || res.stderr != "" {
				t.Errorf("%s alone: exit %d, stdout %q, stderr %q; want its help", name, res.code, res.stdout, res.stderr)
			}
			if strings.Contains(res.stdout, "\n  "+name+" [flags]\n") {
				t.Errorf("%s help offers running the group itself:\n%s", name, res.stdout)
			}
		})
	}
	// A near miss gets cobra's suggestion.
	res := cliRun(t, nil, "feature", "creat")
	if res.code != ExitUsage || !strings.Contains(res.stderr, "Did you mean this?\n\tcreate") {
		t.Errorf("feature creat: exit %d, stderr %q", res.code, res.stderr)
	}
}

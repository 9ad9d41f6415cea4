package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/cmd/help"
)

// newHelpCmd replaces cobra's help command: besides a command's help it
// shows the guides of package help, as `tollgate help TOPIC`. A guide wins
// over a command of the same name (mcp, tui); the command's own help is
// `tollgate COMMAND --help`.
func newHelpCmd(f *Factory) *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "help [TOPIC | COMMAND]",
		Short: "Read a guide, or the help of a command",
		Long: `Read a guide (tollgate help TOPIC), or the help of a command (tollgate help
COMMAND…). Without an argument, list the commands and the guides.

Guides print as plain text; --raw prints their Markdown, as the files under
cmd/help/ in the repository hold it.`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, t := range help.Topics() {
				out = append(out, cobra.CompletionWithDesc(t.Name, t.Title))
			}
			for _, c := range cmd.Root().Commands() {
				if c.IsAvailableCommand() {
					out = append(out, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if len(args) == 0 {
				return root.Help()
			}
			if len(args) == 1 {
				if src, ok := help.Guide(args[0]); ok {
					if raw {
						_, err := io.WriteString(f.IO.Out, src)
						return err
					}
					_, err := io.WriteString(f.IO.Out, help.Plain(src))
					return err
				}
			}
			c, rest, err := root.Find(args)
			if err != nil || c == root || len(rest) > 0 {
				fmt.Fprint(f.IO.Err, topicList())
				return usageError("no help topic or command %q; the topics are listed above", strings.Join(args, " "))
			}
			return c.Help()
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "print a guide's Markdown as it is")
	return cmd
}

// topicList is the guides' part of the root's help: name and summary.
func topicList() string {
	topics := help.Topics()
	width := 0
	for _, t := range topics {
		width = max(width, len(t.Name))
	}
	var b strings.Builder
	b.WriteString("Guides:\n")
	for _, t := range topics {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, t.Name, t.Summary)
	}
	b.WriteString("\nUse \"tollgate help TOPIC\" to read a guide.\n")
	return b.String()
}

// withTopics adds the guides to the root's help, after its commands and
// flags. The list is built now, not in the template, since the guides are
// fixed at build time; braces are escaped for text/template.
func withTopics(root *cobra.Command) {
	list := strings.NewReplacer("{{", `{{"{{"}}`, "}}", `{{"}}"}}`).Replace(topicList())
	root.SetUsageTemplate(root.UsageTemplate() + `{{if not .HasParent}}
` + list + `{{end}}`)
}

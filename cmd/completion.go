package cmd

import (
	"io"

	"github.com/spf13/cobra"
)

// The scripts in completions/ are generated from the command tree; a test
// fails when they are stale. Regenerate them with `go generate ./cmd`.
//go:generate go test -run=^TestCompletionScripts$ . -update-completions

// completionFiles maps each shell to its script's name under completions/,
// the names packagers install them under.
var completionFiles = map[string]string{
	"bash":       "tollgate.bash",
	"zsh":        "_tollgate",
	"fish":       "tollgate.fish",
	"powershell": "tollgate.ps1",
}

func newCompletionCmd(f *Factory) *cobra.Command {
	var noDesc bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell to stdout.

  bash:        source <(tollgate completion bash)
               or save it as /etc/bash_completion.d/tollgate
  zsh:         tollgate completion zsh > "${fpath[1]}/_tollgate"
  fish:        tollgate completion fish > ~/.config/fish/completions/tollgate.fish
  powershell:  tollgate completion powershell | Out-String | Invoke-Expression

Packaged copies are in the repository's completions/ directory.`,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeCompletion(cmd.Root(), args[0], f.IO.Out, !noDesc)
		},
	}
	cmd.Flags().BoolVar(&noDesc, "no-descriptions", false, "leave out completion descriptions")
	return cmd
}

// writeCompletion writes root's completion script for shell to w.
func writeCompletion(root *cobra.Command, shell string, w io.Writer, descriptions bool) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, descriptions)
	case "zsh":
		if descriptions {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	case "fish":
		return root.GenFishCompletion(w, descriptions)
	case "powershell":
		if descriptions {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	}
	return usageError("unsupported shell %q: want bash, zsh, fish or powershell", shell)
}

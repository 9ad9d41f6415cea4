package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by the linker: -ldflags "-X github.com/tollgatehq/tollgate/cmd.version=v1.2.3 ...".
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// buildInfo fills commit and date from the Go toolchain's VCS stamp when the
// linker did not set them.
func buildInfo() (string, string) {
	c, d := commit, date
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.time" && d == "":
				d = s.Value
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return c, d
}

func versionString() string {
	c, d := buildInfo()
	return fmt.Sprintf("tollgate %s (commit %s, built %s)", version, c, d)
}

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.JSON() {
				c, d := buildInfo()
				return writeJSONTo(f.IO.Out, map[string]string{"version": version, "commit": c, "date": d})
			}
			fmt.Fprintln(f.IO.Out, versionString())
			return nil
		},
	}
}

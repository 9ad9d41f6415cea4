// Package cmd is tollgate's cobra command tree: the daemon (`serve`), the
// operator's `admin` and `migrate` commands that open the database, and the
// client commands that call the API through package client.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tollgatehq/tollgate/client"
)

// Exit codes shared by every command; scripts branch on them.
const (
	ExitOK          = 0
	ExitError       = 1 // API or other error
	ExitUsage       = 2 // bad flags or arguments
	ExitNotEntitled = 3 // `entitlements check`: the customer is not entitled
	ExitAuth        = 4 // the API rejected the key (401)
	ExitInvalid     = 5 // `webhook verify`: the signature is not valid
)

// IO holds the streams a command uses; tests swap them for buffers.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// ErrIsTerminal is true when Err is a terminal (progress bars, colour).
	ErrIsTerminal bool
	// OutIsTerminal is true when Out is a terminal.
	OutIsTerminal bool
	// InIsTerminal is true when In is a terminal: a person can be asked.
	InIsTerminal bool
	// Width is Out's width in columns when it is a terminal; 0 means
	// unknown, and tables are then made to fit 80.
	Width int
}

// StdIO returns the process's streams.
func StdIO() *IO {
	s := &IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		InIsTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
	}
	if s.OutIsTerminal {
		// An ioctl: the terminal is not asked anything.
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			s.Width = w
		}
	}
	return s
}

// width is the number of columns tables must fit.
func (io *IO) width() int {
	if io.Width > 0 {
		return io.Width
	}
	return 80
}

// Color reports whether output may be coloured: a terminal and no NO_COLOR.
func (io *IO) Color() bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return io.OutIsTerminal && !noColor
}

// exitError carries an exit code up to Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as a usage error (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// exitWith returns an error that makes Main exit with code after printing err
// (nothing is printed when err is nil).
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// Main runs the command line and returns the process exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], StdIO())
}

// Run executes args against a fresh command tree and returns the exit code.
func Run(ctx context.Context, args []string, streams *IO) int {
	f := NewFactory(streams)
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var ee *exitError
	if !(errors.As(err, &ee) && ee.err == nil) {
		fmt.Fprintln(streams.Err, "tollgate: "+err.Error())
	}
	var apiErr *client.Error
	if code == ExitAuth && errors.As(err, &apiErr) && f.keyFrom != "" {
		fmt.Fprintf(streams.Err, "tollgate: the API refused the key from %s: pass a valid one (`tollgate admin key create` makes a new one)\n", f.keyFrom)
	}
	return code
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Status == 401 {
		return ExitAuth
	}
	// Cobra reports an unknown subcommand before any hook runs.
	if strings.HasPrefix(err.Error(), "unknown command ") {
		return ExitUsage
	}
	return ExitError
}

// NewRootCmd builds the whole command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "tollgate",
		Short:         "Invoicing, subscriptions and usage billing paid in USDC",
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// cobra checks required flags after this hook and returns a
			// plain error (exit 1); checking here makes it a usage error.
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return exitWith(ExitUsage, err)
			}
			if err := cmd.ValidateFlagGroups(); err != nil {
				return exitWith(ExitUsage, err)
			}
			return f.bindFlags(cmd)
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: err}
	})
	pf := root.PersistentFlags()
	pf.String("config", "", "config file (default $XDG_CONFIG_HOME/tollgate/config.yaml)")
	pf.String("api-url", defaultAPIURL, "tollgate API address (env TOLLGATE_API_URL)")
	pf.String("api-key", "", "API key, sk_test_… or sk_live_… (env TOLLGATE_API_KEY)")
	pf.Bool("json", false, "print the API's JSON instead of a table")
	pf.Bool("live", false, "use the live-mode key (live_api_key in the config file) when keys of both modes are configured")

	root.AddCommand(
		newVersionCmd(f),
		newServeCmd(f),
		newMigrateCmd(f),
		newAdminCmd(f),
		newInvoiceCmd(f),
		newMeterCmd(f),
		newUsageCmd(f, nil),
		newAlertCmd(f),
		newCouponCmd(f),
		newFeatureCmd(f),
		newEntitlementsCmd(f),
		newCreditsCmd(f),
		newPlanCmd(f),
		newPaymentsCmd(f),
		newSubscriptionsCmd(f),
		newCheckoutCmd(f),
		newPortalCmd(f, nil),
		newClockCmd(f),
		newTriggerCmd(f),
		newCompletionCmd(f),
		newEventsCmd(f),
		newWebhookCmd(f),
		newTUICmd(f),
		newMCPCmd(f),
	)
	root.SetHelpCommand(newHelpCmd(f))
	withTopics(root)
	usageArgs(root)
	strictGroups(root)
	return root
}

// strictGroups makes every command group below the root (a command that
// only holds subcommands) refuse an unknown subcommand as a usage error
// (exit 2), as cobra does for the root: left alone, cobra prints the
// group's help and exits 0, so a typo in a script passes for success. A
// group run with no subcommand still prints its help.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		if sub.HasSubCommands() && sub.Run == nil && sub.RunE == nil {
			sub.Args = cobra.ArbitraryArgs
			// Being runnable now, the group would list "tollgate x [flags]"
			// as a usage line of its own; it has only its subcommands'.
			sub.SetUsageTemplate(strings.Replace(sub.UsageTemplate(), "{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
			sub.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return usageError("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
			}
		} else if sub.HasSubCommands() {
			// A command that runs and has subcommands (admin archive and
			// its verify) shows its own usage line, which the template it
			// inherits from its group hides.
			sub.SetUsageTemplate(strings.Replace(sub.UsageTemplate(), "{{if and .Runnable (not .HasAvailableSubCommands)}}", "{{if .Runnable}}", 1))
		}
		strictGroups(sub)
	}
}

// suggest formats cobra's "did you mean" list for a mistyped subcommand.
func suggest(cmd *cobra.Command, typed string) string {
	s := cmd.SuggestionsFor(typed)
	if len(s) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
}

// usageArgs makes every command's argument errors usage errors (exit 2):
// cobra returns them as plain errors.
func usageArgs(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return exitWith(ExitUsage, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

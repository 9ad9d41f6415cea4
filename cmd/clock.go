package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

func newClockCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "clock",
		// The test clock exists in test mode only: its key is the test one.
		Annotations: map[string]string{modeAnnotation: string(tenant.Test)},
		Short:       "Show and advance the test clock (test mode)",
		Long: `A merchant's test-mode data follows its test clock. Advancing it runs, in time
order, every renewal, dunning retry, cancellation, credit expiry and
entitlement lapse that falls due, before the command returns. The clock only
moves forward, and a live key has none.`,
	}
	cmd.AddCommand(newClockShowCmd(f), newClockAdvanceCmd(f))
	return cmd
}

func newClockShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "show",
		Short:             "Print the test clock's time",
		Example:           `  tollgate clock show --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			clock, err := c.GetTestClock(cmd.Context())
			if err != nil {
				return explain(err)
			}
			return printClock(f, "Test clock: ", clock)
		},
	}
}

func newClockAdvanceCmd(f *Factory) *cobra.Command {
	var by, to string
	cmd := &cobra.Command{
		Use:   "advance (--by DURATION | --to TIME)",
		Short: "Move the test clock forward, running everything that falls due",
		Example: `  tollgate clock advance --by 30d
  tollgate clock advance --by 1d12h
  tollgate clock advance --to 2027-01-01T00:00:00Z`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := client.TestClockAdvanceParams{By: by}
			if to != "" {
				t, err := parseDate(to)
				if err != nil {
					return usageError("--to %q: want an RFC 3339 date-time such as 2027-01-01T00:00:00Z, or a date such as 2027-01-01", to)
				}
				p.To = &t
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			clock, err := c.AdvanceTestClock(cmd.Context(), p)
			if err != nil {
				return explain(err)
			}
			return printClock(f, "Test clock advanced to ", clock)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&by, "by", "", "how far: a duration with units s, m, h, d (30d, 1d12h, 90m)")
	fl.StringVar(&to, "to", "", "the new time: RFC 3339 (2027-01-01T00:00:00Z) or a date (midnight UTC)")
	cmd.MarkFlagsOneRequired("by", "to")
	cmd.MarkFlagsMutuallyExclusive("by", "to")
	noFileCompletion(cmd, "by", "to")
	return cmd
}

// printClock prints the clock's time and how far it runs ahead of this
// machine's.
func printClock(f *Factory, prefix string, clock *client.TestClock) error {
	if f.JSON() {
		return printRaw(f.IO.Out, clock.Raw)
	}
	_, err := fmt.Fprintf(f.IO.Out, "%s%s UTC (%s)\n", prefix, fmtTime(clock.Now), ahead(time.Until(clock.Now)))
	return err
}

// ahead describes how far the test clock runs ahead of real time, to the
// minute.
func ahead(d time.Duration) string {
	if d < time.Minute {
		return "real time"
	}
	d = d.Round(time.Minute)
	days, rest := d/(24*time.Hour), d%(24*time.Hour)
	s := ""
	if days > 0 {
		s = fmt.Sprintf("%dd", days)
	}
	if rest >= time.Hour {
		s += fmt.Sprintf("%dh", rest/time.Hour)
	}
	if m := rest % time.Hour / time.Minute; m > 0 {
		s += fmt.Sprintf("%dm", m)
	}
	return s + " ahead of real time"
}

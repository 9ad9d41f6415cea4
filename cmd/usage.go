package cmd

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

var usageWindows = []string{"hour", "day", "month"}

// newUsageCmd builds `usage`; tests pass runF to check flag parsing
// without a server.
func newUsageCmd(f *Factory, runF func(context.Context, string, client.UsageParams) error) *cobra.Command {
	var p client.UsageParams
	var from, to string
	cmd := &cobra.Command{
		Use:   "usage CUSTOMER_ID --meter KEY",
		Short: "Show a customer's usage of a meter, as a bar chart of its windows",
		Long: `Show a customer's usage of a meter over a span of time, by the meter's
aggregation (sum, count, max or last). --from defaults to the start of the
customer's current period on a plan using the meter, else 30 days ago; --to
defaults to now. With --window, every hour, day or month (UTC) of the span is
drawn as a bar.`,
		Example: `  tollgate usage cus_… --meter api_calls
  tollgate usage cus_… --meter api_calls --from 2026-07-01 --window day
  tollgate usage cus_… --meter tokens --window hour --from 2026-07-14T00:00:00Z --to 2026-07-15T00:00:00Z --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if p.Window != "" && !slices.Contains(usageWindows, p.Window) {
				return usageError("--window must be one of %s, got %q", strings.Join(usageWindows, ", "), p.Window)
			}
			for _, fl := range []struct {
				name, v string
				dst     **time.Time
			}{{"from", from, &p.From}, {"to", to, &p.To}} {
				if fl.v == "" {
					continue
				}
				t, err := parseDate(fl.v)
				if err != nil {
					return usageError("--%s %q: want an RFC 3339 date-time such as 2026-07-01T00:00:00Z, or a date such as 2026-07-01", fl.name, fl.v)
				}
				*fl.dst = &t
			}
			if runF != nil {
				return runF(cmd.Context(), args[0], p)
			}
			return usageRun(cmd.Context(), f, args[0], p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Meter, "meter", "", "the meter's key or id")
	fl.StringVar(&from, "from", "", "start of the span: RFC 3339 or a date (midnight UTC)")
	fl.StringVar(&to, "to", "", "end of the span, excluded (default now)")
	fl.StringVar(&p.Window, "window", "", "split the span into windows: hour, day or month (UTC)")
	_ = cmd.MarkFlagRequired("meter")
	_ = cmd.RegisterFlagCompletionFunc("window", cobra.FixedCompletions(usageWindows, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "meter", "from", "to")
	return cmd
}

func usageRun(ctx context.Context, f *Factory, customerID string, p client.UsageParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	u, err := c.GetUsage(ctx, customerID, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, u.Raw)
	}
	span := u.From.UTC().Format(time.RFC3339) + " to " + u.To.UTC().Format(time.RFC3339)
	if err := printFields(f.IO, "Usage of "+u.MeterKey+" by "+u.CustomerID, [][2]string{
		{"Meter", u.MeterKey + " (" + u.Meter + ")"},
		{"Aggregation", u.Aggregation},
		{"Span", span},
		{"Value", u.Value},
	}); err != nil {
		return err
	}
	if len(u.Windows) == 0 {
		return nil
	}
	fmt.Fprintln(f.IO.Out)
	width := f.IO.Width
	if width <= 0 {
		width = 80
	}
	_, err = fmt.Fprint(f.IO.Out, barChart(u.Windows, p.Window, width))
	return err
}

// barChart draws one line per window: its start, a bar as long as its
// value relative to the largest, and the value. Integer arithmetic: values
// may exceed any float's exact range.
func barChart(ws []client.UsageWindow, window string, width int) string {
	layout := map[string]string{"hour": "2006-01-02 15:00", "day": "2006-01-02", "month": "2006-01"}[window]
	if layout == "" {
		layout = time.RFC3339
	}
	labelW, valueW := 0, 0
	peak := new(big.Int)
	vals := make([]*big.Int, len(ws))
	for i, w := range ws {
		labelW = max(labelW, len(w.Start.UTC().Format(layout)))
		valueW = max(valueW, utf8.RuneCountInString(w.Value))
		v, ok := new(big.Int).SetString(w.Value, 10)
		if !ok {
			v = new(big.Int)
		}
		vals[i] = v
		if v.Cmp(peak) > 0 {
			peak = v
		}
	}
	barW := max(width-labelW-valueW-4, 10)
	var b strings.Builder
	for i, w := range ws {
		n := 0
		if peak.Sign() > 0 {
			q := new(big.Int).Mul(vals[i], big.NewInt(int64(barW)))
			n = int(q.Quo(q, peak).Int64())
			if n == 0 && vals[i].Sign() > 0 {
				n = 1 // some usage is never drawn as none
			}
		}
		fmt.Fprintf(&b, "%-*s  %s%s  %*s\n", labelW, w.Start.UTC().Format(layout), strings.Repeat("█", n), strings.Repeat(" ", barW-n), valueW, w.Value)
	}
	return b.String()
}

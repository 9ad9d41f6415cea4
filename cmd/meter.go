package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

var aggregations = []string{client.AggregationSum, client.AggregationCount, client.AggregationMax, client.AggregationLast}

func newMeterCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "meter",
		Short: "Create and list meters, the named things usage is recorded against",
	}
	cmd.AddCommand(newMeterCreateCmd(f, nil), newMeterListCmd(f))
	cmd.AddCommand(newMeterSendCmd(f), newMeterCancelCmd(f))
	return cmd
}

// newMeterCreateCmd builds `meter create`; tests pass runF to check flag
// parsing without a server.
func newMeterCreateCmd(f *Factory, runF func(context.Context, client.MeterParams) error) *cobra.Command {
	var p client.MeterParams
	cmd := &cobra.Command{
		Use:   "create --key KEY --display-name NAME",
		Short: "Create a meter (a repeat of an existing key returns that meter unchanged)",
		Example: `  tollgate meter create --key api_calls --display-name "API calls" --aggregation count
  tollgate meter create --key tokens --display-name Tokens --event-value-key tokens --unit-label token`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Checked here too so a typo is a usage error, not a round trip.
			if p.Aggregation != "" && !slices.Contains(aggregations, p.Aggregation) {
				return usageError("--aggregation must be one of %s, got %q", strings.Join(aggregations, ", "), p.Aggregation)
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return meterCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Key, "key", "", "event name usage is sent with: letters, digits, dot, dash, underscore")
	fl.StringVar(&p.DisplayName, "display-name", "", "name shown to people")
	fl.StringVar(&p.Aggregation, "aggregation", "", "how usage in a period combines: sum (default), count, max or last")
	fl.StringVar(&p.EventValueKey, "event-value-key", "", "event property holding the quantity (default: each event counts 1)")
	fl.StringVar(&p.UnitLabel, "unit-label", "", "display unit, e.g. token")
	fl.StringVar(&p.Description, "description", "", "description for your records")
	_ = cmd.MarkFlagRequired("key")
	_ = cmd.MarkFlagRequired("display-name")
	_ = cmd.RegisterFlagCompletionFunc("aggregation", cobra.FixedCompletions(aggregations, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "key", "display-name", "event-value-key", "unit-label", "description")
	return cmd
}

func meterCreateRun(ctx context.Context, f *Factory, p client.MeterParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	var resp client.Response
	m, err := c.CreateMeter(ctx, p, client.CaptureResponse(&resp))
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, m.Raw)
	}
	// The API answers a repeat key with the existing meter, which may differ
	// from the flags given: say so rather than claim it was created.
	title := "Created meter " + m.ID
	if resp.StatusCode == http.StatusOK {
		title = "Meter " + m.Key + " already exists (unchanged): " + m.ID
	}
	return printFields(f.IO, title, [][2]string{
		{"Key", m.Key},
		{"Display name", m.DisplayName},
		{"Aggregation", m.Aggregation},
		{"Event value key", deref(m.EventValueKey)},
		{"Unit label", m.UnitLabel},
		{"Description", deref(m.Description)},
	})
}

func newMeterListCmd(f *Factory) *cobra.Command { return newListCmd(f, "meters", meterListing) }

var meterListing = listing[client.Meter]{
	plural: "meters",
	fetch:  func(c *client.Client) client.ListFunc[client.Meter] { return c.ListMeters },
	raw:    func(v client.Meter) json.RawMessage { return v.Raw },
	header: []string{"ID", "KEY", "DISPLAY NAME", "AGGREGATION", "UNIT", "CREATED"},
	cut:    []int{1, 2, 4},
	drop:   []int{5, 4, 2},
	row: func(v client.Meter) []string {
		return []string{v.ID, v.Key, v.DisplayName, v.Aggregation, v.UnitLabel, whenShort(&v.CreatedAt)}
	},
}

package cmd

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

var alertTypes = []string{"usage_threshold", "credit_balance_below", "spend_threshold"}

func newAlertCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alert",
		Short: "Create, list and archive alerts on usage, credit balances and spend",
		Long: `Alerts emit the alert.triggered event when a customer crosses a threshold:
usage_threshold (usage of a meter in the current period), credit_balance_below
(the credit balance drops below an amount) and spend_threshold (a percent of a
metered plan's cap). Each fires once per customer (or subscription) and period,
or once per drop of a balance below the threshold.`,
	}
	cmd.AddCommand(newAlertCreateCmd(f, nil), newAlertListCmd(f), newAlertArchiveCmd(f))
	return cmd
}

// newAlertCreateCmd builds `alert create`; tests pass runF.
func newAlertCreateCmd(f *Factory, runF func(context.Context, client.AlertParams) error) *cobra.Command {
	var p client.AlertParams
	var threshold string
	cmd := &cobra.Command{
		Use:   "create --type TYPE",
		Short: "Create an alert, for one customer or for every customer",
		Example: `  tollgate alert create --type usage_threshold --meter meter_… --threshold 1000
  tollgate alert create --type credit_balance_below --threshold 5usdc --customer-id cus_…
  tollgate alert create --type spend_threshold --percent 80 --name "80% of the cap"`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(alertTypes, p.Type) {
				return usageError("--type must be one of %s, got %q", strings.Join(alertTypes, ", "), p.Type)
			}
			if threshold != "" {
				if p.Type == "credit_balance_below" {
					a, err := parseAmount(threshold)
					if err != nil {
						return err
					}
					p.Threshold = a.String()
				} else {
					p.Threshold = threshold
				}
			}
			if cmd.Flags().Changed("percent") && p.Percent == 0 {
				return usageError("--percent must be from 1 to 100, got 0")
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return alertCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Type, "type", "", "usage_threshold, credit_balance_below or spend_threshold")
	fl.StringVar(&p.Meter, "meter", "", "usage_threshold: the meter's id (meter_…)")
	fl.StringVar(&threshold, "threshold", "", "usage_threshold: a quantity; credit_balance_below: an amount (base units, or 5usdc)")
	fl.IntVar(&p.Percent, "percent", 0, "spend_threshold: percent of the plan's cap, 1 to 100")
	fl.StringVar(&p.CustomerID, "customer-id", "", "watch one customer (default: every customer)")
	fl.StringVar(&p.ExternalCustomerID, "external-customer-id", "", "watch one customer, by your own id")
	fl.StringVar(&p.Name, "name", "", "a name for your records, up to 200 characters")
	_ = cmd.MarkFlagRequired("type")
	_ = cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(alertTypes, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "meter", "threshold", "percent", "customer-id", "external-customer-id", "name")
	return cmd
}

func alertCreateRun(ctx context.Context, f *Factory, p client.AlertParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	a, err := c.CreateAlert(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, a.Raw)
	}
	return printFields(f.IO, "Created alert "+a.ID, alertFields(*a))
}

func alertFields(a client.Alert) [][2]string {
	customer := "every customer"
	if a.CustomerID != nil {
		customer = *a.CustomerID
	}
	return [][2]string{
		{"Type", a.Type},
		{"Name", deref(a.Name)},
		{"Customer", customer},
		{"Meter", deref(a.Meter)},
		{"Threshold", alertThreshold(a)},
		{"Status", a.Status},
	}
}

func alertThreshold(a client.Alert) string {
	switch {
	case a.Percent != nil:
		return strconv.Itoa(*a.Percent) + "% of the cap"
	case a.Threshold != nil && a.Type == "credit_balance_below":
		return usdc(*a.Threshold)
	default:
		return deref(a.Threshold)
	}
}

func newAlertListCmd(f *Factory) *cobra.Command { return newListCmd(f, "alerts", alertListing) }

var alertListing = listing[client.Alert]{
	plural: "alerts",
	fetch:  func(c *client.Client) client.ListFunc[client.Alert] { return c.ListAlerts },
	raw:    func(v client.Alert) json.RawMessage { return v.Raw },
	header: []string{"ID", "TYPE", "CUSTOMER", "THRESHOLD", "STATUS", "NAME", "CREATED"},
	elide:  []int{0, 2},
	cut:    []int{5},
	drop:   []int{6, 5, 2},
	row: func(v client.Alert) []string {
		customer := "all"
		if v.CustomerID != nil {
			customer = *v.CustomerID
		}
		return []string{v.ID, v.Type, customer, alertThreshold(v), v.Status, deref(v.Name), whenShort(&v.CreatedAt)}
	},
}

func newAlertArchiveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "archive ALERT_ID",
		Short:             "Archive an alert: it fires no more",
		Example:           `  tollgate alert archive alert_…`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			a, err := c.ArchiveAlert(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, a.Raw)
			}
			return printFields(f.IO, "Archived alert "+a.ID, alertFields(*a))
		},
	}
}

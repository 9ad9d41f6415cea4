package cmd

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

func newSubscriptionsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "subscriptions",
		Short: "List, show, change and cancel subscriptions, and preview their next charge or a plan change",
	}
	cmd.AddCommand(newSubscriptionsListCmd(f), newSubscriptionsGetCmd(f), newSubscriptionsCancelCmd(f), newSubscriptionsUpcomingCmd(f),
		newSubscriptionsChangeCmd(f), newSubscriptionsPreviewCmd(f))
	return cmd
}

func newSubscriptionsListCmd(f *Factory) *cobra.Command {
	var o listOptions
	var customer string
	cmd := &cobra.Command{
		Use:   "list [--customer cus_…]",
		Short: "List subscriptions, newest first",
		Example: `  tollgate subscriptions list --limit 10
  tollgate subscriptions list --customer cus_… --all --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd, f, o, subscriptionListing(f.IO, customer))
		},
	}
	addListFlags(cmd, &o)
	cmd.Flags().StringVar(&customer, "customer", "", "only this customer's subscriptions (cus_…)")
	noFileCompletion(cmd, "limit", "before", "customer")
	return cmd
}

func subscriptionListing(streams *IO, customer string) listing[client.Subscription] {
	return listing[client.Subscription]{
		plural: "subscriptions",
		fetch: func(c *client.Client) client.ListFunc[client.Subscription] {
			return func(ctx context.Context, p client.ListParams, opts ...client.CallOption) (*client.List[client.Subscription], error) {
				return c.ListSubscriptionsFiltered(ctx, client.SubscriptionListParams{ListParams: p, CustomerID: customer}, opts...)
			}
		},
		raw:    func(v client.Subscription) json.RawMessage { return v.Raw },
		header: []string{"ID", "STATUS", "PLAN", "CUSTOMER", "AMOUNT", "BILLED", "PERIOD END", "CREATED"},
		right:  []int{4},
		elide:  []int{2, 3},
		drop:   []int{7, 3, 2, 5},
		row: func(v client.Subscription) []string {
			amount := ""
			if v.Amount != nil {
				amount = usdc(*v.Amount)
			}
			return []string{v.ID, v.Status, v.PlanID, deref(v.CustomerID), amount, every(deref(v.Interval), v.IntervalDays),
				whenShort(v.CurrentPeriodEnd), whenShort(&v.CreatedAt)}
		},
	}
}

func newSubscriptionsGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "get SUBSCRIPTION_ID",
		Short:             "Show a subscription",
		Example:           `  tollgate subscriptions get sub_… --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			x, err := c.GetSubscription(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, x.Raw)
			}
			return printDetails(f.IO, "Subscription "+x.ID, subscriptionFields(x))
		},
	}
}

func newSubscriptionsCancelCmd(f *Factory) *cobra.Command {
	var now bool
	cmd := &cobra.Command{
		Use:   "cancel SUBSCRIPTION_ID [--now]",
		Short: "Cancel a subscription at the end of its period, or --now",
		Long: `Cancel a subscription. By default it runs to the end of the period already
paid for and then expires: cancel_at is set and subscription.updated sent now,
subscription.expired then. --now ends it at once and emits
subscription.expired now.`,
		Example: `  tollgate subscriptions cancel sub_…
  tollgate subscriptions cancel sub_… --now --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			var p client.CancelParams
			if now {
				atPeriodEnd := false
				p.AtPeriodEnd = &atPeriodEnd
			}
			x, err := c.CancelSubscription(cmd.Context(), args[0], p)
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, x.Raw)
			}
			title := "Canceled subscription " + x.ID + ": it ends " + when(x.CancelAt)
			if now || x.EndedAt != nil {
				title = "Ended subscription " + x.ID
			}
			return printFields(f.IO, title, subscriptionFields(x))
		},
	}
	cmd.Flags().BoolVar(&now, "now", false, "end it now instead of at the end of the current period")
	return cmd
}

func newSubscriptionsUpcomingCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "upcoming SUBSCRIPTION_ID",
		Short: "Preview the next charge (a metered period's usage so far, rated); nothing is charged",
		Example: `  tollgate subscriptions upcoming sub_…
  tollgate subscriptions upcoming sub_… --json | jq .amount`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			up, err := c.UpcomingCharge(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, up.Raw)
			}
			fields := [][2]string{{"Amount", amountDetail(up.Amount)}}
			for _, fl := range paymentFields(up) {
				switch fl[0] {
				case "Period", "Customer", "Payer":
					fields = append(fields, fl)
				}
			}
			if err := printDetails(f.IO, "Upcoming charge of "+args[0], fields); err != nil {
				return err
			}
			return printLines(f.IO, up.Lines)
		},
	}
}

package cmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

// changeFlags are the flags `subscriptions change` and `preview` share.
type changeFlags struct {
	plan string
	now  bool
}

func (o *changeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.plan, "plan", "", "the plan to move to (price_…), of the same usage type")
	cmd.Flags().BoolVar(&o.now, "now", false, "change at once, prorating the rest of the period (licensed plans), instead of at the period's end")
	_ = cmd.MarkFlagRequired("plan")
	noFileCompletion(cmd, "plan")
}

func (o changeFlags) params() client.ChangeParams {
	p := client.ChangeParams{Plan: o.plan, At: "period_end"}
	if o.now {
		p.At = "now"
	}
	return p
}

func newSubscriptionsChangeCmd(f *Factory) *cobra.Command {
	var o changeFlags
	cmd := &cobra.Command{
		Use:   "change SUBSCRIPTION_ID --plan price_… [--now]",
		Short: "Move a subscription to another plan at the period's end, or --now with proration",
		Long: `Move a subscription to another plan of the same usage type. By default the
change waits for the end of the current period (pending_plan_id): the next
period starts on the new plan, charged its amount, with its features. --now
(licensed plans) changes at once: the rest of the period is prorated, an
upgrade charged now and a downgrade granted as prepaid credits, and the
features switch at once. Changing to the current plan drops a pending change.
A new amount above what the payer authorized fails with
authorization_required and prints the page where the payer authorizes it.`,
		Example: `  tollgate subscriptions change sub_… --plan price_basic
  tollgate subscriptions change sub_… --plan price_pro --now --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			x, err := c.ChangeSubscription(cmd.Context(), args[0], o.params())
			if err != nil {
				return explainChange(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, x.Raw)
			}
			title := "Changed subscription " + x.ID + " to " + x.PlanID
			if x.PendingPlanID != nil {
				title = "Subscription " + x.ID + " moves to " + *x.PendingPlanID + " on " + when(x.PendingChangeAt)
			}
			return printFields(f.IO, title, subscriptionFields(x))
		},
	}
	o.add(cmd)
	return cmd
}

// explainChange adds the authorization page to an authorization_required
// error.
func explainChange(err error) error {
	var e *client.Error
	if errors.As(err, &e) && e.CheckoutURL != "" {
		return &withHint{err: err, hint: "the payer authorizes the new amount at " + e.CheckoutURL}
	}
	return explain(err)
}

// withHint is an error with a line of advice after it.
type withHint struct {
	err  error
	hint string
}

func (w *withHint) Error() string { return w.err.Error() + "\n" + w.hint }
func (w *withHint) Unwrap() error { return w.err }

func newSubscriptionsPreviewCmd(f *Factory) *cobra.Command {
	var o changeFlags
	cmd := &cobra.Command{
		Use:   "preview SUBSCRIPTION_ID --plan price_… [--now]",
		Short: "Preview a plan change: when it takes effect, what is charged or credited now, the next charge",
		Example: `  tollgate subscriptions preview sub_… --plan price_pro --now
  tollgate subscriptions preview sub_… --plan price_basic --json | jq .next_charge`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			pv, err := c.PreviewSubscriptionChange(cmd.Context(), args[0], o.params())
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, pv.Raw)
			}
			fields := [][2]string{
				{"Plan", pv.PlanID},
				{"Takes effect", when(&pv.EffectiveAt)},
				{"Charged now", amountDetail(pv.AmountDueNow)},
				{"Credited now", amountDetail(pv.CreditGranted)},
				{"Next charge", amountDetail(pv.NextCharge.Amount) + " on " + when(&pv.NextCharge.At)},
			}
			if err := printDetails(f.IO, "Plan change of "+pv.SubscriptionID+" (preview: nothing changed)", fields); err != nil {
				return err
			}
			return printLines(f.IO, pv.Lines)
		},
	}
	o.add(cmd)
	return cmd
}

func newPlanMigrateCmd(f *Factory) *cobra.Command {
	var to string
	var preview bool
	cmd := &cobra.Command{
		Use:   "migrate PLAN_ID --to price_… [--preview]",
		Short: "Move every subscriber of a plan to another plan at their period's end",
		Long: `Schedule a change to --to at the end of the current period for every trialing,
active and past-due subscription of the plan (each emits subscription.updated),
and print how many move and one period's amounts before and after. --preview
counts and sums only.

A subscription whose payer authorized less per period than --to's amount is
left out: the payer never agreed to pay it. The command prints each one with
the page where its payer authorizes the new amount; the change is scheduled
when they do.`,
		Example: `  tollgate plan migrate price_old --to price_new --preview
  tollgate plan migrate price_old --to price_new --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			m, err := c.MigratePlan(cmd.Context(), args[0], client.MigrateParams{To: to, Preview: preview})
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, m.Raw)
			}
			title := "Migration of " + m.From + " to " + m.To
			if preview {
				title += " (preview: nothing scheduled)"
			}
			if err := printDetails(f.IO, title, [][2]string{
				{"Subscriptions", strconv.FormatInt(m.Subscriptions, 10)},
				{"One period before", amountDetail(m.AmountBefore)},
				{"One period after", amountDetail(m.AmountAfter)},
				{"Effective", "at each subscription's period end"},
				{"Left out", leftOut(m.AuthorizationRequired)},
			}); err != nil {
				return err
			}
			return printReauthorizations(f.IO, m)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the plan the subscribers move to (price_…)")
	cmd.Flags().BoolVar(&preview, "preview", false, "count and sum only; schedule nothing")
	_ = cmd.MarkFlagRequired("to")
	noFileCompletion(cmd, "to")
	return cmd
}

// leftOut says how many subscriptions a migration left out for their
// authorization ("" for none: the line is not printed).
func leftOut(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10) + " whose payer must authorize the new amount first"
}

// printReauthorizations lists the subscriptions a migration left out, each
// with the page its payer authorizes the change at, whole: a URL cut to
// fit the terminal could not be sent to anyone.
func printReauthorizations(streams *IO, m *client.PlanMigration) error {
	if len(m.NeedsAuthorization) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Send each payer their page to authorize the new amount (the change is scheduled then):\n")
	for _, a := range m.NeedsAuthorization {
		fmt.Fprintf(&b, "  %s  authorized %s  %s\n", clean(a.SubscriptionID), usdc(a.AuthorizedAmount), clean(a.CheckoutURL))
	}
	if int64(len(m.NeedsAuthorization)) < m.AuthorizationRequired {
		fmt.Fprintf(&b, "  … and %d more: run the migration again once these have authorized.\n", m.AuthorizationRequired-int64(len(m.NeedsAuthorization)))
	}
	_, err := io.WriteString(streams.Out, b.String())
	return err
}

package cmd

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

func newPaymentsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "payments",
		Short: "List and show confirmed payments",
	}
	cmd.AddCommand(newPaymentsListCmd(f), newPaymentsGetCmd(f))
	return cmd
}

func newPaymentsListCmd(f *Factory) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List confirmed payments, newest first",
		Example: `  tollgate payments list --limit 10
  tollgate payments list --all --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd, f, o, paymentListing(f.IO))
		},
	}
	addListFlags(cmd, &o)
	noFileCompletion(cmd, "limit", "before")
	return cmd
}

func paymentListing(streams *IO) listing[client.Payment] {
	return listing[client.Payment]{
		plural: "payments",
		fetch:  func(c *client.Client) client.ListFunc[client.Payment] { return c.ListPayments },
		raw:    func(v client.Payment) json.RawMessage { return v.Raw },
		header: []string{"ID", "AMOUNT", "STATUS", "FOR", "PAYER", "CREATED"},
		right:  []int{1},
		elide:  []int{3, 4},
		drop:   []int{5, 4},
		row: func(v client.Payment) []string {
			return []string{v.ID, usdc(v.Amount), v.Status, paymentFor(v), deref(v.Payer), whenShort(&v.CreatedAt)}
		},
	}
}

func newPaymentsGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "get PAYMENT_ID",
		Short: "Show a payment; for a metered charge, the lines that make its amount",
		Example: `  tollgate payments get pay_…
  tollgate payments get pay_… --json | jq .lines`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			p, err := c.GetPayment(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, p.Raw)
			}
			return printPayment(f.IO, "Payment "+p.ID, p)
		},
	}
}

// printPayment prints a payment's details and, for a metered charge, its
// lines.
func printPayment(streams *IO, title string, p *client.Payment) error {
	if err := printDetails(streams, title, paymentFields(p)); err != nil {
		return err
	}
	return printLines(streams, p.Lines)
}

package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// magicWallets are test mode's payer wallets and what each does, for
// --wallet's completion and help (the payments guide has the same table).
var magicWallets = [][2]string{
	{rail.WalletSucceeds, "every payment and charge succeeds"},
	{rail.WalletInsufficient, "insufficient funds: every payment and charge fails"},
	{rail.WalletRevokesAfter1st, "the first payment succeeds; the authorization is revoked before the next charge"},
	{rail.WalletFailsTwiceAfter1, "the first payment succeeds; the next two charges fail, the third succeeds"},
	{rail.WalletTransientOnce, "the rail fails transiently once per operation, then succeeds (no double charge)"},
}

func newCheckoutCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkout",
		Short: "Pay at a checkout link as the customer would (test mode)",
	}
	cmd.AddCommand(newCheckoutPayCmd(f, nil))
	return cmd
}

// checkoutPayOptions are the flags of `checkout pay`.
type checkoutPayOptions struct {
	Wallet             string
	ExternalCustomerID string
	Coupon             string
}

// newCheckoutPayCmd builds `checkout pay`; tests pass runF to check flag
// parsing without a server.
func newCheckoutPayCmd(f *Factory, runF func(context.Context, string, client.CheckoutParams) error) *cobra.Command {
	var o checkoutPayOptions
	long := `Pay an invoice (inv_…) or subscribe to a plan (price_…) the way a customer does
at its checkout page, with one of test mode's magic wallets, so scripts and
tests can play the customer. Prints the payment (invoice) or the
subscription (plan). A refused payment is exit 1 with the API's error
(payment_failed, invoice_not_open, already_subscribed). Paying twice never
charges twice.

Magic wallets:
`
	for _, w := range magicWallets {
		long += "  " + w[0] + "  " + w[1] + "\n"
	}
	cmd := &cobra.Command{
		Use:   "pay ID --wallet 0x…",
		Short: "Pay an invoice or subscribe to a plan with a magic test wallet",
		Long:  long,
		Example: `  tollgate checkout pay inv_… --wallet 0x4242424242424242424242424242424242424242
  tollgate checkout pay price_… --wallet 0x4242424242424242424242424242424242424242 --external-customer-id user_42 --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			p := client.CheckoutParams{Payer: o.Wallet, ExternalCustomerID: o.ExternalCustomerID, Coupon: o.Coupon}
			if runF != nil {
				return runF(cmd.Context(), args[0], p)
			}
			return checkoutPayRun(cmd.Context(), f, args[0], p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Wallet, "wallet", "", "the payer: a magic test wallet (see above)")
	fl.StringVar(&o.ExternalCustomerID, "external-customer-id", "", "plans: your id for the customer (default: the wallet address)")
	fl.StringVar(&o.Coupon, "coupon", "", "plans: a coupon's code or id, redeemed with the checkout")
	_ = cmd.MarkFlagRequired("wallet")
	_ = cmd.RegisterFlagCompletionFunc("wallet", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, w := range magicWallets {
			out = append(out, w[0]+"\t"+w[1])
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	noFileCompletion(cmd, "external-customer-id", "coupon")
	return cmd
}

func checkoutPayRun(ctx context.Context, f *Factory, id string, p client.CheckoutParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	res, err := c.Pay(ctx, id, p)
	if err != nil {
		return explain(err)
	}
	if x := res.Subscription; x != nil {
		if f.JSON() {
			return printRaw(f.IO.Out, x.Raw)
		}
		return printFields(f.IO, "Subscribed: "+x.ID, subscriptionFields(x))
	}
	pay := res.Payment
	if f.JSON() {
		return printRaw(f.IO.Out, pay.Raw)
	}
	if err := printFields(f.IO, "Paid "+id+": "+pay.ID, paymentFields(pay)); err != nil {
		return err
	}
	return printLines(f.IO, pay.Lines)
}

package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
)

// newAdminRefundCmd is `tollgate admin refund PAYMENT_ID`: a dashboard
// operation (no API, no tool), refunding part or all of a payment.
func newAdminRefundCmd(f *Factory) *cobra.Command {
	var amount, reason string
	cmd := &cobra.Command{
		Use:   "refund PAYMENT_ID",
		Short: "Refund part or all of a payment (never more than what is left of it)",
		Long: `Refund a payment through the settlement rail. Without --amount, everything
left of the payment is refunded. refund.succeeded is emitted when the rail
confirms the refund. Test-mode payments are refunded on the simulated rail.`,
		Example: `  tollgate admin refund pay_… --amount 2.50usdc --reason "partial service"
  tollgate admin refund pay_… --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := payments.RefundInput{PaymentID: args[0]}
			if amount != "" {
				a, err := money.ParseCLI(amount)
				if err != nil {
					return usageError("--amount: %v", err)
				}
				in.Amount = &a
			}
			if reason != "" {
				in.Reason = &reason
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				testRail := rail.NewTest(d.DB)
				railFor := func(m tenant.Mode) (rail.Rail, bool) { return testRail, m == tenant.Test }
				clockOf := func(s tenant.Scope) time.Time {
					ahead, _ := testclock.Ahead(context.Background(), d.DB, s.MerchantID)
					if s.Mode != tenant.Test {
						ahead = 0
					}
					return time.Now().Add(ahead)
				}
				r, err := payments.IssueRefund(cmd.Context(), d.DB, railFor, in, clockOf)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, r.Wire())
				}
				fmt.Fprintf(f.IO.Out, "Refunded %s USDC of %s: %s (%s)\n", r.Amount.USDC(), r.PaymentID, r.ID, r.Status)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&amount, "amount", "", "amount to refund: base units or USDC with a suffix (9usdc); default everything left")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the record")
	return cmd
}

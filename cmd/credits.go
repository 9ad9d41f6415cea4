package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/id"
)

func newCreditsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "credits",
		Short: "Grant, debit and read customers' prepaid credit balances",
	}
	cmd.AddCommand(newCreditsGrantCmd(f, nil), newCreditsDebitCmd(f, nil), newCreditsBalanceCmd(f))
	return cmd
}

// creditOptions are the flags grant and debit share, as typed.
type creditOptions struct {
	Amount             string
	CustomerID         string
	ExternalCustomerID string
	Reason             string
	IdempotencyKey     string
}

func addCreditFlags(cmd *cobra.Command, o *creditOptions, defaultReason string) {
	fl := cmd.Flags()
	fl.StringVar(&o.Amount, "amount", "", "amount in base units (9000000) or USDC with a suffix (9usdc, 9.00usdc)")
	fl.StringVar(&o.CustomerID, "customer-id", "", "the customer's id (cus_…)")
	fl.StringVar(&o.ExternalCustomerID, "external-customer-id", "", "your own id for the customer")
	fl.StringVar(&o.Reason, "reason", "", "ledger note, up to 300 characters (default \""+defaultReason+"\")")
	fl.StringVar(&o.IdempotencyKey, "idempotency-key", "", "repeat-safe key, up to 255 characters (default: a new random key, so only this command's own retries are deduplicated)")
	_ = cmd.MarkFlagRequired("amount")
	cmd.MarkFlagsOneRequired("customer-id", "external-customer-id")
	noFileCompletion(cmd, "amount", "customer-id", "external-customer-id", "reason", "idempotency-key")
}

// checked converts the amount and fills a random idempotency key, so the
// client may retry after a 503 or a lost connection without applying twice.
func (o creditOptions) checked() (creditOptions, string, error) {
	amount, err := parseAmount(o.Amount)
	if err != nil {
		return o, "", err
	}
	if o.IdempotencyKey == "" {
		o.IdempotencyKey = "cli_" + id.Random(24)
	}
	return o, amount.String(), nil
}

// newCreditsGrantCmd builds `credits grant`; tests pass runF to check flag
// parsing without a server.
func newCreditsGrantCmd(f *Factory, runF func(context.Context, client.CreditGrantParams) error) *cobra.Command {
	var o creditOptions
	var expiresAt string
	cmd := &cobra.Command{
		Use:   "grant --amount AMOUNT (--customer-id ID | --external-customer-id ID)",
		Short: "Top up a customer's prepaid credits",
		Example: `  tollgate credits grant --amount 25usdc --external-customer-id user_42 --reason "welcome bonus"
  tollgate credits grant --amount 5000000 --customer-id cus_… --expires-at 2026-12-31 --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnBareAmount(cmd.ErrOrStderr(), o.Amount)
			o, amount, err := o.checked()
			if err != nil {
				return err
			}
			p := client.CreditGrantParams{Amount: amount, CustomerID: o.CustomerID, ExternalCustomerID: o.ExternalCustomerID,
				Reason: o.Reason, IdempotencyKey: o.IdempotencyKey}
			if expiresAt != "" {
				t, err := parseDate(expiresAt)
				if err != nil {
					return usageError("--expires-at %q: want an RFC 3339 date-time such as 2026-12-01T17:00:00Z, or a date such as 2026-12-01", expiresAt)
				}
				p.ExpiresAt = &t
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return creditsGrantRun(cmd.Context(), f, p)
		},
	}
	addCreditFlags(cmd, &o, "API grant")
	cmd.Flags().StringVar(&expiresAt, "expires-at", "", "when the credits expire: RFC 3339 or a date (midnight UTC); default never")
	noFileCompletion(cmd, "expires-at")
	return cmd
}

func creditsGrantRun(ctx context.Context, f *Factory, p client.CreditGrantParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	g, err := c.GrantCredits(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, g.Raw)
	}
	title := "Granted " + usdc(g.Granted) + " to " + g.CustomerID
	if g.Deduplicated {
		title = "Already granted with idempotency key " + p.IdempotencyKey + " (nothing changed): " + usdc(g.Granted) + " to " + g.CustomerID
	}
	return printFields(f.IO, title, [][2]string{
		{"Customer", g.CustomerID},
		{"Granted", usdc(g.Granted)},
		{"Balance", usdc(g.Balance)},
		{"Entry", g.EntryID},
	})
}

// newCreditsDebitCmd builds `credits debit`; tests pass runF.
func newCreditsDebitCmd(f *Factory, runF func(context.Context, client.CreditDebitParams) error) *cobra.Command {
	var o creditOptions
	var allowNegative bool
	cmd := &cobra.Command{
		Use:   "debit --amount AMOUNT (--customer-id ID | --external-customer-id ID)",
		Short: "Draw down a customer's prepaid credits",
		Long: `Draw down a customer's prepaid credits. By default the debit covers what the
balance allows and reports the rest as shortfall; --allow-negative covers the
whole amount and lets the balance go below zero.`,
		Example: `  tollgate credits debit --amount 0.25usdc --external-customer-id user_42
  tollgate credits debit --amount 1000000 --customer-id cus_… --allow-negative --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnBareAmount(cmd.ErrOrStderr(), o.Amount)
			o, amount, err := o.checked()
			if err != nil {
				return err
			}
			p := client.CreditDebitParams{Amount: amount, CustomerID: o.CustomerID, ExternalCustomerID: o.ExternalCustomerID,
				Reason: o.Reason, AllowNegative: allowNegative, IdempotencyKey: o.IdempotencyKey}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return creditsDebitRun(cmd.Context(), f, p)
		},
	}
	addCreditFlags(cmd, &o, "API debit")
	cmd.Flags().BoolVar(&allowNegative, "allow-negative", false, "cover the whole amount even if the balance goes below zero")
	return cmd
}

func creditsDebitRun(ctx context.Context, f *Factory, p client.CreditDebitParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	d, err := c.DebitCredits(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, d.Raw)
	}
	title := "Debited " + usdc(d.Covered) + " from " + d.CustomerID
	if d.Shortfall != "0" {
		title += fmt.Sprintf(" (%s short)", usdc(d.Shortfall))
	}
	if d.Deduplicated {
		title = "Already debited with idempotency key " + p.IdempotencyKey + " (nothing changed): " + usdc(d.Covered) + " from " + d.CustomerID
	}
	return printFields(f.IO, title, [][2]string{
		{"Customer", d.CustomerID},
		{"Requested", usdc(d.Requested)},
		{"Covered", usdc(d.Covered)},
		{"Shortfall", usdc(d.Shortfall)},
		{"Balance", usdc(d.Balance)},
	})
}

func newCreditsBalanceCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "balance CUSTOMER_ID",
		Short:             "Show a customer's credit balance, lifetime granted and consumed",
		Example:           `  tollgate credits balance cus_… --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			b, err := c.GetCreditBalance(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, b.Raw)
			}
			t := newTablePrinter(f.IO, "CUSTOMER", "BALANCE", "GRANTED", "CONSUMED", "EXPIRED", "ACCOUNT").
				alignRight(1).alignRight(2).alignRight(3).alignRight(4).elide(5).drop(5)
			granted, consumed, expired, account := "-", "-", "-", "(no credit account)"
			if b.AccountID != "" {
				granted, consumed, account = usdc(b.Granted), usdc(b.Consumed), b.AccountID
				expired = usdc(b.Expired) // blank from a daemon that does not send it

			}
			t.row(b.CustomerID, usdc(b.Balance), granted, consumed, expired, account)
			return t.print()
		},
	}
}

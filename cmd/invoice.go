package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/money"
)

func newInvoiceCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "invoice",
		Short: "Create, list, show and void one-time invoices",
	}
	cmd.AddCommand(newInvoiceCreateCmd(f, nil), newInvoiceListCmd(f), newInvoiceGetCmd(f), newInvoiceVoidCmd(f))
	return cmd
}

// invoiceCreateOptions are the flags of `invoice create`, as typed.
type invoiceCreateOptions struct {
	Amount        string
	Description   string
	Memo          string
	InvoiceNumber string
	Recipient     string
	DueAt         string
}

// params checks the flags and converts them to the API's request: a bad
// amount or date is a usage error, caught before any request is sent.
func (o *invoiceCreateOptions) params() (client.InvoiceParams, error) {
	amount, err := parseAmount(o.Amount)
	if err != nil {
		return client.InvoiceParams{}, err
	}
	p := client.InvoiceParams{
		Amount:        amount.String(),
		Description:   o.Description,
		Memo:          o.Memo,
		InvoiceNumber: o.InvoiceNumber,
		Recipient:     o.Recipient,
	}
	if o.DueAt != "" {
		t, err := parseDate(o.DueAt)
		if err != nil {
			return client.InvoiceParams{}, usageError("--due-at %q: want an RFC 3339 date-time such as 2026-12-01T17:00:00Z, or a date such as 2026-12-01", o.DueAt)
		}
		p.DueAt = &t
	}
	return p, nil
}

// parseAmount reads --amount: base units (9000000) or USDC with a suffix
// (9usdc, 9.00usdc). Invoices must be for a positive amount.
func parseAmount(s string) (money.Amount, error) {
	a, err := money.ParseCLI(s)
	switch {
	case errors.Is(err, money.ErrOverflow):
		return 0, usageError("--amount %q is too large", s)
	case err != nil:
		return 0, usageError("--amount %q: want base units (9000000) or USDC with a suffix (9usdc, 9.00usdc)", s)
	case a <= 0:
		return 0, usageError("--amount must be positive, got %q", s)
	}
	return a, nil
}

// warnBareAmount prints a one-line warning on w when --amount was typed as
// a bare number under one USDC (9): that is base units, and the person more
// likely meant 9 USDC. The request still goes as typed (scripts that send
// base units keep working), and stdout is untouched, so --json is too.
func warnBareAmount(w io.Writer, s string) {
	s = strings.TrimSpace(s)
	a, err := money.Parse(s)
	if err != nil || a <= 0 || a >= money.Amount(oneUSDC) {
		return
	}
	fmt.Fprintf(w, "tollgate: warning: --amount %s is %s base units (%s USDC), not %s USDC; for that write %susdc or %s\n",
		s, s, a.USDC(), s, s, money.Amount(a*oneUSDC))
}

// oneUSDC is one USDC in base units.
const oneUSDC = 1_000_000

// parseDate reads an RFC 3339 date-time, or a bare date meaning midnight
// UTC, which is what people usually mean by a due date.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}

// newInvoiceCreateCmd builds `invoice create`; tests pass runF to check flag
// parsing without a server.
func newInvoiceCreateCmd(f *Factory, runF func(context.Context, client.InvoiceParams) error) *cobra.Command {
	o := &invoiceCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create --amount AMOUNT --description TEXT",
		Short: "Create an invoice and print its checkout URL",
		Example: `  tollgate invoice create --amount 9usdc --description "Consulting, November"
  tollgate invoice create --amount 9000000 --description "Order 42" --due-at 2026-12-01 --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnBareAmount(cmd.ErrOrStderr(), o.Amount)
			p, err := o.params()
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return invoiceCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Amount, "amount", "", "amount in base units (9000000) or USDC with a suffix (9usdc, 9.00usdc)")
	fl.StringVar(&o.Description, "description", "", "shown on the checkout page (1 to 500 characters)")
	fl.StringVar(&o.Memo, "memo", "", "note, up to 200 characters")
	fl.StringVar(&o.InvoiceNumber, "invoice-number", "", "your invoice number, up to 100 characters")
	fl.StringVar(&o.Recipient, "recipient", "", "label or email for your records, up to 200 characters")
	fl.StringVar(&o.DueAt, "due-at", "", "due date: RFC 3339 (2026-12-01T17:00:00Z) or a date (2026-12-01, midnight UTC)")
	_ = cmd.MarkFlagRequired("amount")
	_ = cmd.MarkFlagRequired("description")
	noFileCompletion(cmd, "amount", "description", "memo", "invoice-number", "recipient", "due-at")
	return cmd
}

func invoiceCreateRun(ctx context.Context, f *Factory, p client.InvoiceParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	inv, err := c.CreateInvoice(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, inv.Raw)
	}
	return printFields(f.IO, "Created invoice "+inv.ID, [][2]string{
		{"Amount", fmt.Sprintf("%s (%s base units)", usdc(inv.Amount), inv.Amount)},
		{"Status", inv.Status},
		{"Description", inv.Description},
		{"Invoice number", deref(inv.InvoiceNumber)},
		{"Recipient", deref(inv.Recipient)},
		{"Due", when(inv.DueAt)},
		{"Checkout URL", inv.CheckoutURL},
	})
}

func newInvoiceListCmd(f *Factory) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List invoices, newest first",
		Example: `  tollgate invoice list --limit 10
  tollgate invoice list --all --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd, f, o, invoiceListing(f.IO))
		},
	}
	addListFlags(cmd, &o)
	noFileCompletion(cmd, "limit", "before")
	return cmd
}

func invoiceListing(streams *IO) listing[client.Invoice] {
	return listing[client.Invoice]{
		plural: "invoices",
		fetch:  func(c *client.Client) client.ListFunc[client.Invoice] { return c.ListInvoices },
		raw:    func(v client.Invoice) json.RawMessage { return v.Raw },
		header: []string{"ID", "AMOUNT", "STATUS", "DESCRIPTION", "CREATED"},
		right:  []int{1},
		cut:    []int{3},
		drop:   []int{4},
		row: func(v client.Invoice) []string {
			return []string{v.ID, usdc(v.Amount), v.Status, v.Description, whenShort(&v.CreatedAt)}
		},
	}
}

// noFileCompletion stops the shell offering file names for flags that take
// free text.
func noFileCompletion(cmd *cobra.Command, flags ...string) {
	for _, name := range flags {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

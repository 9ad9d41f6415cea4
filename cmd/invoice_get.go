package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

// `invoice get` and `invoice void`: reading one invoice, and voiding an open
// one so it can no longer be paid.

func newInvoiceGetCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "get INVOICE_ID",
		Short:             "Show an invoice, with its payment once paid",
		Example:           `  tollgate invoice get inv_… --json`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return invoiceShow(cmd.Context(), f, args[0], false)
		},
	}
}

func newInvoiceVoidCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "void INVOICE_ID",
		Short: "Void an open invoice so it can no longer be paid",
		Long: `Void an open invoice: its checkout page stops taking payment. A paid invoice
cannot be voided (invoice_not_open); refund its payment instead with
tollgate admin refund.`,
		Example:           `  tollgate invoice void inv_…`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return invoiceShow(cmd.Context(), f, args[0], true)
		},
	}
}

// invoiceShow reads (or with void, voids) the invoice and prints it.
func invoiceShow(ctx context.Context, f *Factory, id string, void bool) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	var inv *client.Invoice
	if void {
		inv, err = c.VoidInvoice(ctx, id)
	} else {
		inv, err = c.GetInvoice(ctx, id)
	}
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, inv.Raw)
	}
	fields := [][2]string{
		{"Amount", amountDetail(inv.Amount)},
		{"Status", inv.Status},
		{"Description", inv.Description},
		{"Memo", deref(inv.Memo)},
		{"Invoice number", deref(inv.InvoiceNumber)},
		{"Recipient", deref(inv.Recipient)},
		{"Due", when(inv.DueAt)},
		{"Paid", when(inv.PaidAt)},
		{"Payment", deref(inv.PaymentID)},
		{"Voided", when(inv.VoidedAt)},
		{"Created", when(&inv.CreatedAt)},
		{"Checkout URL", inv.CheckoutURL},
	}
	if void {
		return printFields(f.IO, "Voided invoice "+inv.ID, fields)
	}
	return printDetails(f.IO, "Invoice "+inv.ID, fields)
}

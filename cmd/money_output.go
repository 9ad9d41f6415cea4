package cmd

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tollgatehq/tollgate/client"
)

// This file holds how the money path's objects (payments, subscriptions,
// charge lines) are shown to people; plan, payments, subscriptions,
// checkout and trigger share it.

// printDetails prints "Label:  value" lines under a plain title, for objects
// that were read rather than created (no ✓).
func printDetails(streams *IO, title string, fields [][2]string) error {
	if streams.Color() {
		title = bold(title)
	}
	if _, err := fmt.Fprintln(streams.Out, title); err != nil {
		return err
	}
	t := newTablePrinter(streams)
	for _, f := range fields {
		if f[1] != "" {
			t.row("  "+f[0]+":", f[1])
		}
	}
	return t.print()
}

// amountDetail is an amount for a details view: USDC and the exact base
// units.
func amountDetail(base string) string {
	return fmt.Sprintf("%s (%s base units)", usdc(base), base)
}

// every describes a billing interval: "every month", "every 10 days".
func every(interval string, days *int) string {
	switch interval {
	case "":
		return ""
	case "biweekly":
		return "every 2 weeks"
	case "custom":
		if days != nil {
			if *days == 1 {
				return "every day"
			}
			return "every " + strconv.Itoa(*days) + " days"
		}
	}
	return "every " + interval
}

// paymentFields are the details of a payment or an upcoming charge.
func paymentFields(p *client.Payment) [][2]string {
	refunded := deref(p.AmountRefunded)
	if refunded == "0" {
		refunded = ""
	} else if refunded != "" {
		refunded = usdc(refunded)
	}
	period := ""
	if p.PeriodStart != nil && p.PeriodEnd != nil {
		period = when(p.PeriodStart) + " – " + when(p.PeriodEnd)
	}
	return [][2]string{
		{"Amount", amountDetail(p.Amount)},
		{"Status", p.Status},
		{"Refunded", refunded},
		{"Invoice", deref(p.InvoiceID)},
		{"Subscription", deref(p.SubscriptionID)},
		{"Period", period},
		{"Customer", deref(p.CustomerID)},
		{"Payer", deref(p.Payer)},
		{"Payee", deref(p.Payee)},
		{"Network", deref(p.Network)},
		{"Transaction", deref(p.TxHash)},
		{"Confirmed", when(p.ConfirmedAt)},
		{"Created", when(&p.CreatedAt)},
	}
}

// paymentFor is what a payment paid: its invoice or its subscription.
func paymentFor(p client.Payment) string {
	if p.InvoiceID != nil {
		return *p.InvoiceID
	}
	return deref(p.SubscriptionID)
}

// subscriptionFields are the details of a subscription.
func subscriptionFields(x *client.Subscription) [][2]string {
	amount := ""
	if x.Amount != nil {
		amount = amountDetail(*x.Amount)
		if deref(x.UsageType) == "metered" {
			amount = "usage, capped at " + amount
		}
	}
	period := ""
	if x.CurrentPeriodStart != nil && x.CurrentPeriodEnd != nil {
		period = when(x.CurrentPeriodStart) + " – " + when(x.CurrentPeriodEnd)
	}
	return [][2]string{
		{"Status", x.Status},
		{"Plan", x.PlanID},
		{"Product", deref(x.ProductID)},
		{"Customer", deref(x.CustomerID)},
		{"Payer", deref(x.Payer)},
		{"Usage type", deref(x.UsageType)},
		{"Amount", amount},
		{"Billed", every(deref(x.Interval), x.IntervalDays)},
		{"Current period", period},
		{"Pending change", pendingChange(x)},
		{"Trial ends", when(x.TrialEnd)},
		{"Cancels at", when(x.CancelAt)},
		{"Ended", when(x.EndedAt)},
		{"Latest payment", deref(x.LatestPaymentID)},
		{"Discount", discountText(x.Discount)},
		{"Created", when(&x.CreatedAt)},
	}
}

// chargeLine is one line of a metered charge (wire.PaymentLine).
type chargeLine struct {
	Kind        string  `json:"kind"`
	Description string  `json:"description"`
	Quantity    *string `json:"quantity"`
	Tier        *int    `json:"tier"`
	UnitAmount  *string `json:"unit_amount"`
	Amount      string  `json:"amount"`
}

// printLines prints how a metered charge was computed as a small table
// under the details; nothing when there are no lines (licensed charges).
func printLines(streams *IO, raw json.RawMessage) error {
	var lines []chargeLine
	if len(raw) == 0 || json.Unmarshal(raw, &lines) != nil || len(lines) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(streams.Out, "  Lines:"); err != nil {
		return err
	}
	t := newTablePrinter(streams, "    KIND", "DESCRIPTION", "QUANTITY", "TIER", "UNIT AMOUNT", "AMOUNT").
		alignRight(2).alignRight(4).alignRight(5).cut(1).drop(3)
	for _, l := range lines {
		tier, unit := "", ""
		if l.Tier != nil {
			tier = strconv.Itoa(*l.Tier)
		}
		if l.UnitAmount != nil {
			unit = usdc(*l.UnitAmount)
		}
		t.row("    "+l.Kind, l.Description, deref(l.Quantity), tier, unit, usdc(l.Amount))
	}
	return t.print()
}

// pendingChange says which plan the next period starts on, and when; "" when
// no change waits.
func pendingChange(x *client.Subscription) string {
	if x.PendingPlanID == nil {
		return ""
	}
	return "to " + *x.PendingPlanID + " on " + when(x.PendingChangeAt)
}

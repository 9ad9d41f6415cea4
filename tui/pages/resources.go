package pages

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
)

func when(c *common.Common, t *time.Time) string {
	if t == nil {
		return ""
	}
	return common.When(*t, c.Now())
}

// NewInvoices lists invoices.
func NewInvoices(c *common.Common) *List[client.Invoice] {
	return NewList(c, ListSpec[client.Invoice]{
		Title: "Invoices", Plural: "invoices",
		Fetch: func(ctx context.Context, cl *client.Client, p client.ListParams) (*client.List[client.Invoice], error) {
			return cl.ListInvoices(ctx, p)
		},
		Raw: func(v client.Invoice) []byte { return v.Raw },
		Columns: []Column[client.Invoice]{
			{Title: "ID", Width: 28, Cell: func(v client.Invoice) string { return v.ID }},
			{Title: "STATUS", Width: 6, Status: true, Cell: func(v client.Invoice) string { return v.Status }},
			{Title: "AMOUNT", Width: 14, Right: true, Cell: func(v client.Invoice) string { return common.USDC(v.Amount) }},
			{Title: "DESCRIPTION", Cell: func(v client.Invoice) string { return v.Description }},
			{Title: "CREATED", Width: 11, Cell: func(v client.Invoice) string { return when(c, &v.CreatedAt) }},
		},
	})
}

// NewPayments lists confirmed payments.
func NewPayments(c *common.Common) *List[client.Payment] {
	return NewList(c, ListSpec[client.Payment]{
		Title: "Payments", Plural: "payments",
		Fetch: func(ctx context.Context, cl *client.Client, p client.ListParams) (*client.List[client.Payment], error) {
			return cl.ListPayments(ctx, p)
		},
		Raw: func(v client.Payment) []byte { return v.Raw },
		Columns: []Column[client.Payment]{
			{Title: "ID", Width: 28, Cell: func(v client.Payment) string { return v.ID }},
			{Title: "STATUS", Width: 9, Status: true, Cell: func(v client.Payment) string { return v.Status }},
			{Title: "AMOUNT", Width: 14, Right: true, Cell: func(v client.Payment) string { return common.USDC(v.Amount) }},
			{Title: "FOR", Cell: func(v client.Payment) string {
				if v.InvoiceID != nil {
					return *v.InvoiceID
				}
				return common.Deref(v.SubscriptionID)
			}},
			{Title: "CREATED", Width: 11, Cell: func(v client.Payment) string { return when(c, &v.CreatedAt) }},
		},
	})
}

// NewSubscriptions lists subscriptions.
func NewSubscriptions(c *common.Common) *List[client.Subscription] {
	return NewList(c, ListSpec[client.Subscription]{
		Title: "Subscriptions", Plural: "subscriptions",
		Fetch: func(ctx context.Context, cl *client.Client, p client.ListParams) (*client.List[client.Subscription], error) {
			return cl.ListSubscriptions(ctx, p)
		},
		Raw:     func(v client.Subscription) []byte { return v.Raw },
		Columns: subscriptionColumns(c),
	})
}

func subscriptionColumns(c *common.Common) []Column[client.Subscription] {
	return []Column[client.Subscription]{
		{Title: "ID", Width: 28, Cell: func(v client.Subscription) string { return v.ID }},
		{Title: "STATUS", Width: 8, Status: true, Cell: func(v client.Subscription) string { return v.Status }},
		{Title: "AMOUNT", Width: 13, Right: true, Cell: func(v client.Subscription) string { return common.USDC(common.Deref(v.Amount)) }},
		{Title: "PLAN", Cell: planCell},
		// A trialing subscription's period is its trial: PERIOD END is its
		// trial_end (the details show the field itself).
		{Title: "PERIOD END", Width: 11, Cell: func(v client.Subscription) string { return when(c, v.CurrentPeriodEnd) }},
	}
}

// NewMeters lists meters.
func NewMeters(c *common.Common) *List[client.Meter] {
	return NewList(c, ListSpec[client.Meter]{
		Title: "Meters", Plural: "meters",
		Fetch: func(ctx context.Context, cl *client.Client, p client.ListParams) (*client.List[client.Meter], error) {
			return cl.ListMeters(ctx, p)
		},
		Raw: func(v client.Meter) []byte { return v.Raw },
		Columns: []Column[client.Meter]{
			{Title: "KEY", Cell: func(v client.Meter) string { return v.Key }},
			{Title: "NAME", Width: 18, Cell: func(v client.Meter) string { return v.DisplayName }},
			{Title: "AGGREGATION", Width: 11, Cell: func(v client.Meter) string { return v.Aggregation }},
			{Title: "UNIT", Width: 8, Cell: func(v client.Meter) string { return v.UnitLabel }},
			{Title: "CREATED", Width: 11, Cell: func(v client.Meter) string { return when(c, &v.CreatedAt) }},
		},
	})
}

// planCell is a subscription's plan; a change waiting for the period's end
// leads with the plan it moves to, and a discount leads with what it takes
// off, so a narrow column still shows them.
func planCell(v client.Subscription) string {
	plan := v.PlanID
	if v.PendingPlanID != nil {
		plan = "→ " + *v.PendingPlanID + " from " + v.PlanID
	}
	if off := discountOff(v.Discount); off != "" {
		plan = off + " · " + plan
	}
	return plan
}

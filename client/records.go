package client

import (
	"context"
	"encoding/json"
	"time"
)

// Payment is a confirmed on-chain payment. Pointer fields are absent (nil)
// when the API does not send them: a payment is for an invoice or for a
// subscription, and period and lines belong to subscription charges.
type Payment struct {
	Object         string     `json:"object"` // "payment"
	ID             string     `json:"id"`     // pay_…
	Amount         string     `json:"amount"` // base units
	Currency       string     `json:"currency,omitempty"`
	Status         string     `json:"status"` // succeeded, partially_refunded, refunded
	AmountRefunded *string    `json:"amount_refunded,omitempty"`
	InvoiceID      *string    `json:"invoice_id"`
	SubscriptionID *string    `json:"subscription_id"`
	CustomerID     *string    `json:"customer_id,omitempty"`
	Payer          *string    `json:"payer"`
	Payee          *string    `json:"payee,omitempty"`
	Network        *string    `json:"network,omitempty"` // "test" for the simulated rail
	TxHash         *string    `json:"tx_hash"`
	ConfirmedAt    *time.Time `json:"confirmed_at,omitempty"`
	PeriodStart    *time.Time `json:"period_start,omitempty"`
	PeriodEnd      *time.Time `json:"period_end,omitempty"`
	// Lines shows how a metered period's usage became the amount.
	Lines     json.RawMessage `json:"lines,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Livemode  bool            `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Payment) setRaw(b json.RawMessage) { v.Raw = b }

// ListPayments returns one page of payments, newest first (GET /v1/payments).
func (c *Client) ListPayments(ctx context.Context, p ListParams, opts ...CallOption) (*List[Payment], error) {
	return list[Payment](ctx, c, "/v1/payments", p, opts)
}

// Subscription is a customer's subscription to a plan. Pointer fields are
// absent (nil) when the API does not send them or sends null.
type Subscription struct {
	Object             string     `json:"object"` // "subscription"
	ID                 string     `json:"id"`     // sub_…
	Status             string     `json:"status"` // trialing, active, past_due, canceled, revoked, expired
	PlanID             string     `json:"plan_id"`
	ProductID          *string    `json:"product_id,omitempty"`
	CustomerID         *string    `json:"customer_id"`
	Payer              *string    `json:"payer,omitempty"`
	UsageType          *string    `json:"usage_type,omitempty"` // licensed or metered
	Amount             *string    `json:"amount,omitempty"`     // base units per period (metered: the cap)
	Interval           *string    `json:"interval,omitempty"`
	IntervalDays       *int       `json:"interval_days,omitempty"`
	CurrentPeriodStart *time.Time `json:"current_period_start"`
	CurrentPeriodEnd   *time.Time `json:"current_period_end"`
	CancelAt           *time.Time `json:"cancel_at,omitempty"`
	EndedAt            *time.Time `json:"ended_at,omitempty"`
	LatestPaymentID    *string    `json:"latest_payment_id,omitempty"`
	// PendingPlanID is the plan the next period starts on, from
	// PendingChangeAt (a change at the period's end); nil when none.
	PendingPlanID   *string    `json:"pending_plan_id,omitempty"`
	PendingChangeAt *time.Time `json:"pending_change_at,omitempty"`
	TrialEnd        *time.Time `json:"trial_end"` // when a trial ends and the first period starts, or nil
	Discount        *Discount  `json:"discount"`  // nil: none
	CreatedAt       time.Time  `json:"created_at"`
	Livemode        bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Subscription) setRaw(b json.RawMessage) { v.Raw = b }

// ListSubscriptions returns one page of subscriptions, newest first
// (GET /v1/subscriptions).
func (c *Client) ListSubscriptions(ctx context.Context, p ListParams, opts ...CallOption) (*List[Subscription], error) {
	return list[Subscription](ctx, c, "/v1/subscriptions", p, opts)
}

// SubscriptionListParams select a page of subscriptions, optionally of one
// customer only.
type SubscriptionListParams struct {
	ListParams
	// CustomerID (cus_…), when set, lists only that customer's
	// subscriptions.
	CustomerID string
}

// ListSubscriptionsFiltered returns one page of the subscriptions p selects,
// newest first (GET /v1/subscriptions?customer_id=…). An unknown customer
// gives an empty page.
func (c *Client) ListSubscriptionsFiltered(ctx context.Context, p SubscriptionListParams, opts ...CallOption) (*List[Subscription], error) {
	q := p.query()
	if p.CustomerID != "" {
		q.Set("customer_id", p.CustomerID)
	}
	return listQuery[Subscription](ctx, c, "/v1/subscriptions", q, opts)
}

// Event is an entry of the event feed that backs webhooks.
type Event struct {
	Object    string          `json:"object"` // "event"
	ID        string          `json:"id"`     // evt_…
	Type      string          `json:"type"`   // e.g. "invoice.paid"
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"` // shape depends on Type
	Livemode  bool            `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Event) setRaw(b json.RawMessage) { v.Raw = b }

// ListEvents returns one page of events, newest first (GET /v1/events), for
// polling or for catching up after missed webhook deliveries.
func (c *Client) ListEvents(ctx context.Context, p ListParams, opts ...CallOption) (*List[Event], error) {
	return list[Event](ctx, c, "/v1/events", p, opts)
}

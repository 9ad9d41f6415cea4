package client

import (
	"context"
	"encoding/json"
	"time"
)

// Payment is a confirmed on-chain payment.
type Payment struct {
	Object         string    `json:"object"` // "payment"
	ID             string    `json:"id"`     // pay_…
	Amount         string    `json:"amount"` // base units
	Status         string    `json:"status"`
	InvoiceID      *string   `json:"invoice_id"`
	SubscriptionID *string   `json:"subscription_id"`
	Payer          *string   `json:"payer"`
	TxHash         *string   `json:"tx_hash"`
	CreatedAt      time.Time `json:"created_at"`
	Livemode       bool      `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Payment) setRaw(b json.RawMessage) { v.Raw = b }

// ListPayments returns one page of payments, newest first (GET /v1/payments).
func (c *Client) ListPayments(ctx context.Context, p ListParams, opts ...CallOption) (*List[Payment], error) {
	return list[Payment](ctx, c, "/v1/payments", p, opts)
}

// Subscription is a customer's subscription to a plan.
type Subscription struct {
	Object             string     `json:"object"` // "subscription"
	ID                 string     `json:"id"`     // sub_…
	PlanID             string     `json:"plan_id"`
	CustomerID         *string    `json:"customer_id"`
	Status             string     `json:"status"`
	CurrentPeriodStart *time.Time `json:"current_period_start"`
	CurrentPeriodEnd   *time.Time `json:"current_period_end"`
	CreatedAt          time.Time  `json:"created_at"`
	Livemode           bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Subscription) setRaw(b json.RawMessage) { v.Raw = b }

// ListSubscriptions returns one page of subscriptions, newest first
// (GET /v1/subscriptions).
func (c *Client) ListSubscriptions(ctx context.Context, p ListParams, opts ...CallOption) (*List[Subscription], error) {
	return list[Subscription](ctx, c, "/v1/subscriptions", p, opts)
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

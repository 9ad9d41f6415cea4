package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// Plan is a subscription plan (a price of a product), paid at CheckoutURL.
type Plan struct {
	Object       string          `json:"object"` // "plan"
	ID           string          `json:"id"`     // price_…
	Amount       string          `json:"amount"` // base units per period; the cap of a metered plan
	Interval     string          `json:"interval"`
	IntervalDays *int            `json:"interval_days"`
	UsageType    string          `json:"usage_type"` // licensed or metered
	Meter        *string         `json:"meter"`
	PricingModel json.RawMessage `json:"pricing_model"`
	Features     []PlanFeature   `json:"features"`
	TrialDays    *int            `json:"trial_days"` // free days a subscription starts with, or nil
	Product      Product         `json:"product"`
	CheckoutURL  string          `json:"checkout_url"`
	CreatedAt    time.Time       `json:"created_at"`
	Livemode     bool            `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Plan) setRaw(b json.RawMessage) { v.Raw = b }

// Product is what a plan sells.
type Product struct {
	ID          string  `json:"id"` // prod_…
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// PlanFeature is a feature a plan grants its subscribers.
type PlanFeature struct {
	FeatureKey string  `json:"feature_key"`
	LimitValue *string `json:"limit_value,omitempty"`
}

// PlanParams is the body of POST /v1/plans. PricingModel is the
// pricing_model object, e.g. {"kind":"per_unit","unitAmount":"1000"}.
type PlanParams struct {
	Name         string          `json:"name"`
	Amount       string          `json:"amount"`
	Interval     string          `json:"interval"`
	IntervalDays *int            `json:"interval_days,omitempty"`
	Description  string          `json:"description,omitempty"`
	UsageType    string          `json:"usage_type,omitempty"`
	Meter        string          `json:"meter,omitempty"`
	PricingModel json.RawMessage `json:"pricing_model,omitempty"`
	Features     []PlanFeature   `json:"features,omitempty"`
	// TrialDays (1 to 730) starts each subscription with a free trial:
	// checkout charges nothing, the first period starts at its end.
	TrialDays *int `json:"trial_days,omitempty"`
}

// CreatePlan creates a plan (POST /v1/plans). It fails with an *Error of
// code invalid_request, amount_too_small or invalid_interval.
func (c *Client) CreatePlan(ctx context.Context, p PlanParams, opts ...CallOption) (*Plan, error) {
	return create[Plan](ctx, c, "/v1/plans", p, false, opts)
}

// GetPayment returns a payment (GET /v1/payments/{id}).
func (c *Client) GetPayment(ctx context.Context, id string, opts ...CallOption) (*Payment, error) {
	return get[Payment](ctx, c, "/v1/payments/"+url.PathEscape(id), opts)
}

// GetSubscription returns a subscription (GET /v1/subscriptions/{id}).
func (c *Client) GetSubscription(ctx context.Context, id string, opts ...CallOption) (*Subscription, error) {
	return get[Subscription](ctx, c, "/v1/subscriptions/"+url.PathEscape(id), opts)
}

// CancelParams is the body of POST /v1/subscriptions/{id}/cancel.
type CancelParams struct {
	// AtPeriodEnd ends the subscription when its period ends (the
	// default when nil); false ends it now.
	AtPeriodEnd *bool `json:"at_period_end,omitempty"`
}

// CancelSubscription cancels a subscription (POST
// /v1/subscriptions/{id}/cancel). An ended one is an *Error of code
// invalid_request.
func (c *Client) CancelSubscription(ctx context.Context, id string, p CancelParams, opts ...CallOption) (*Subscription, error) {
	return create[Subscription](ctx, c, "/v1/subscriptions/"+url.PathEscape(id)+"/cancel", p, true, opts)
}

// UpcomingCharge previews a subscription's next charge (GET
// /v1/subscriptions/{id}/upcoming): a payment-shaped object whose Object is
// "upcoming_charge", with Lines for a metered plan; nothing is charged.
func (c *Client) UpcomingCharge(ctx context.Context, id string, opts ...CallOption) (*Payment, error) {
	return get[Payment](ctx, c, "/v1/subscriptions/"+url.PathEscape(id)+"/upcoming", opts)
}

// CheckoutParams is what a customer submits at a checkout page (test
// mode: a magic wallet; plans: optionally the merchant's id for the
// customer).
type CheckoutParams struct {
	Payer              string `json:"payer"`
	ExternalCustomerID string `json:"external_customer_id,omitempty"`
	Coupon             string `json:"coupon,omitempty"` // a coupon's code or id
}

// CheckoutResult is what paying at a checkout link made: the payment of an
// invoice, or the subscription to a plan.
type CheckoutResult struct {
	Payment      *Payment
	Subscription *Subscription
}

// Pay pays at a checkout link as its customer would (POST
// /checkout/{id}/pay, no key needed): id is an invoice (inv_…) or a plan
// (price_…). It fails with an *Error of code payment_failed (402),
// invoice_not_open or already_subscribed (409), invalid_request (payer) or
// resource_not_found. Paying is not retried: resubmitting is safe (it
// never charges twice) but the caller decides.
func (c *Client) Pay(ctx context.Context, id string, p CheckoutParams, opts ...CallOption) (*CheckoutResult, error) {
	r, err := newRequest("POST", "/checkout/"+url.PathEscape(id)+"/pay", p, false, opts)
	if err != nil {
		return nil, err
	}
	b, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(id, "price_") {
		x, err := decodeObject[Subscription](b)
		return &CheckoutResult{Subscription: x}, err
	}
	pay, err := decodeObject[Payment](b)
	return &CheckoutResult{Payment: pay}, err
}

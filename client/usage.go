package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// UsageSummary is a customer's usage of a meter over [From, To), by the
// meter's aggregation, and per window when one was asked for.
type UsageSummary struct {
	Object      string        `json:"object"` // "usage_summary"
	CustomerID  string        `json:"customer_id"`
	Meter       string        `json:"meter"`     // meter_…
	MeterKey    string        `json:"meter_key"` // the event name
	Aggregation string        `json:"aggregation"`
	From        time.Time     `json:"from"`
	To          time.Time     `json:"to"`
	Value       string        `json:"value"` // "0" when there is no usage
	Windows     []UsageWindow `json:"windows"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *UsageSummary) setRaw(b json.RawMessage) { v.Raw = b }

// UsageWindow is one hour, day or month (UTC) of a usage summary; Value
// counts the events of the window inside the summary's span.
type UsageWindow struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Value string    `json:"value"`
}

// UsageParams are the query of GET /v1/customers/{id}/usage.
type UsageParams struct {
	Meter string // required: a meter id or key
	// From defaults to the start of the customer's current period on the
	// meter's plan, else 30 days before To; To defaults to now.
	From, To *time.Time
	Window   string // "", "hour", "day" or "month"
}

// GetUsage returns a customer's usage of a meter (GET
// /v1/customers/{id}/usage). It fails with an *Error of code
// unknown_customer (404), unknown_meter (404) or invalid_request (from not
// before to, more than 1,000 windows, a bad window).
func (c *Client) GetUsage(ctx context.Context, customerID string, p UsageParams, opts ...CallOption) (*UsageSummary, error) {
	r, err := newRequest(http.MethodGet, "/v1/customers/"+url.PathEscape(customerID)+"/usage", nil, true, opts)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("meter", p.Meter)
	if p.From != nil {
		q.Set("from", p.From.UTC().Format(time.RFC3339Nano))
	}
	if p.To != nil {
		q.Set("to", p.To.UTC().Format(time.RFC3339Nano))
	}
	if p.Window != "" {
		q.Set("window", p.Window)
	}
	r.query = q
	return call[UsageSummary](ctx, c, r)
}

// CancelMeterEvent cancels a meter event (POST /v1/meter-events/{id}/cancel):
// it then counts nowhere, and CancelledAt is set. Cancelling twice answers
// the same. It fails with an *Error of code resource_not_found (404) or
// usage_already_billed (409: its period was already rated).
func (c *Client) CancelMeterEvent(ctx context.Context, id string, opts ...CallOption) (*MeterEvent, error) {
	return create[MeterEvent](ctx, c, "/v1/meter-events/"+url.PathEscape(id)+"/cancel", nil, true, opts)
}

// Alert is a threshold that emits alert.triggered when crossed.
type Alert struct {
	Object     string     `json:"object"` // "alert"
	ID         string     `json:"id"`     // alert_…
	Type       string     `json:"type"`   // usage_threshold, credit_balance_below, spend_threshold
	Name       *string    `json:"name"`
	CustomerID *string    `json:"customer_id"` // nil: every customer
	Meter      *string    `json:"meter"`
	Threshold  *string    `json:"threshold"`
	Percent    *int       `json:"percent"`
	Status     string     `json:"status"` // active or archived
	CreatedAt  time.Time  `json:"created_at"`
	ArchivedAt *time.Time `json:"archived_at"`
	Livemode   bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Alert) setRaw(b json.RawMessage) { v.Raw = b }

// AlertParams is the body of POST /v1/alerts. Empty optional fields are not
// sent.
type AlertParams struct {
	Type               string `json:"type"`
	Meter              string `json:"meter,omitempty"`     // usage_threshold: a meter id
	Threshold          string `json:"threshold,omitempty"` // a quantity, or base units for credit_balance_below
	Percent            int    `json:"percent,omitempty"`   // spend_threshold: 1 to 100
	CustomerID         string `json:"customer_id,omitempty"`
	ExternalCustomerID string `json:"external_customer_id,omitempty"`
	Name               string `json:"name,omitempty"`
}

// CreateAlert creates an alert (POST /v1/alerts). It fails with an *Error
// of code invalid_request, unknown_meter, unknown_customer or mode_mismatch.
func (c *Client) CreateAlert(ctx context.Context, p AlertParams, opts ...CallOption) (*Alert, error) {
	return create[Alert](ctx, c, "/v1/alerts", p, false, opts)
}

// ListAlerts returns a page of alerts, newest first (GET /v1/alerts).
func (c *Client) ListAlerts(ctx context.Context, p ListParams, opts ...CallOption) (*List[Alert], error) {
	return list[Alert](ctx, c, "/v1/alerts", p, opts)
}

// ArchiveAlert stops an alert from firing (POST /v1/alerts/{id}/archive).
// It fails with an *Error of code resource_not_found (404).
func (c *Client) ArchiveAlert(ctx context.Context, id string, opts ...CallOption) (*Alert, error) {
	return create[Alert](ctx, c, "/v1/alerts/"+url.PathEscape(id)+"/archive", nil, true, opts)
}

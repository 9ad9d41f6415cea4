package daemon

import (
	"encoding/json"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The wire shapes of SPEC.md's objects. Domain types stay free of JSON; these
// functions are the one place an object's public form is decided.

// timestamp formats t as ISO-8601 in UTC with microseconds.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

type listJSON struct {
	Object     string  `json:"object"`
	Data       any     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func toList[T, W any](r page.Result[T], conv func(T) W) listJSON {
	data := make([]W, len(r.Items))
	for i, it := range r.Items {
		data[i] = conv(it)
	}
	l := listJSON{Object: "list", Data: data, HasMore: r.HasMore}
	if r.Next != nil {
		c := r.Next.String()
		l.NextCursor = &c
	}
	return l
}

type invoiceJSON struct {
	Object        string  `json:"object"`
	ID            string  `json:"id"`
	Amount        string  `json:"amount"`
	Status        string  `json:"status"`
	CheckoutURL   string  `json:"checkout_url"`
	Description   string  `json:"description"`
	Memo          *string `json:"memo"`
	InvoiceNumber *string `json:"invoice_number"`
	Recipient     *string `json:"recipient"`
	DueAt         *string `json:"due_at"`
	CreatedAt     string  `json:"created_at"`
	Livemode      bool    `json:"livemode"`
}

func (s *Server) invoiceJSON(i invoices.Invoice) invoiceJSON {
	return invoiceJSON{
		Object: "invoice", ID: i.ID, Amount: i.Amount.String(), Status: i.Status,
		CheckoutURL: s.baseURL + "/checkout/" + i.ID, Description: i.Description,
		Memo: i.Memo, InvoiceNumber: i.InvoiceNumber, Recipient: i.Recipient,
		DueAt: optTimestamp(i.DueAt), CreatedAt: timestamp(i.CreatedAt), Livemode: i.Mode == tenant.Live,
	}
}

type meterJSON struct {
	Object        string  `json:"object"`
	ID            string  `json:"id"`
	Key           string  `json:"key"`
	DisplayName   string  `json:"display_name"`
	Aggregation   string  `json:"aggregation"`
	EventValueKey *string `json:"event_value_key"`
	UnitLabel     string  `json:"unit_label"`
	Description   *string `json:"description"`
	CreatedAt     string  `json:"created_at"`
	Livemode      bool    `json:"livemode"`
}

func meterToJSON(m metering.Meter) meterJSON {
	j := meterJSON{
		Object: "meter", ID: m.ID, Key: m.Key, DisplayName: m.DisplayName, Aggregation: m.Aggregation,
		EventValueKey: m.EventValueKey, Description: m.Description, CreatedAt: timestamp(m.CreatedAt), Livemode: m.Mode == tenant.Live,
	}
	if m.UnitLabel != nil {
		j.UnitLabel = *m.UnitLabel
	}
	return j
}

type paymentJSON struct {
	Object         string  `json:"object"`
	ID             string  `json:"id"`
	Amount         string  `json:"amount"`
	Status         string  `json:"status"`
	InvoiceID      *string `json:"invoice_id"`
	SubscriptionID *string `json:"subscription_id"`
	Payer          *string `json:"payer"`
	TxHash         *string `json:"tx_hash"`
	CreatedAt      string  `json:"created_at"`
	Livemode       bool    `json:"livemode"`
}

func paymentToJSON(p payments.Payment) paymentJSON {
	return paymentJSON{
		Object: "payment", ID: p.ID, Amount: p.Amount.String(), Status: p.Status, InvoiceID: p.InvoiceID,
		SubscriptionID: p.SubscriptionID, Payer: p.Payer, TxHash: p.TxHash, CreatedAt: timestamp(p.CreatedAt), Livemode: p.Mode == tenant.Live,
	}
}

type subscriptionJSON struct {
	Object             string  `json:"object"`
	ID                 string  `json:"id"`
	PlanID             string  `json:"plan_id"`
	CustomerID         *string `json:"customer_id"`
	Status             string  `json:"status"`
	CurrentPeriodStart *string `json:"current_period_start"`
	CurrentPeriodEnd   *string `json:"current_period_end"`
	CreatedAt          string  `json:"created_at"`
	Livemode           bool    `json:"livemode"`
}

func subscriptionToJSON(x subscriptions.Subscription) subscriptionJSON {
	return subscriptionJSON{
		Object: "subscription", ID: x.ID, PlanID: x.PlanID, CustomerID: x.CustomerID, Status: x.Status,
		CurrentPeriodStart: optTimestamp(x.CurrentPeriodStart), CurrentPeriodEnd: optTimestamp(x.CurrentPeriodEnd),
		CreatedAt: timestamp(x.CreatedAt), Livemode: x.Mode == tenant.Live,
	}
}

type eventJSON struct {
	Object    string          `json:"object"`
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
	Livemode  bool            `json:"livemode"`
}

func eventToJSON(e events.Event) eventJSON {
	return eventJSON{Object: "event", ID: e.ID, Type: e.Type, CreatedAt: timestamp(e.CreatedAt), Data: e.Data, Livemode: e.Mode == tenant.Live}
}

package checkout

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/pricing"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The hosted page's reads. A page is public and read far more often than
// paid, so each kind is one statement: the object with its merchant's name
// and what the page shows beside it (an invoice's payment, a plan's product,
// meter and the subscription being shown), rather than one query per object.

// InvoicePage is what an invoice's checkout page shows.
type InvoicePage struct {
	Mode          tenant.Mode  `db:"mode"`
	ID            string       `db:"id"`
	Merchant      string       `db:"merchant"`
	Amount        money.Amount `db:"amount"`
	Description   string       `db:"description"`
	Memo          *string      `db:"memo"`
	InvoiceNumber *string      `db:"invoice_number"`
	DueAt         *time.Time   `db:"due_at"`
	Status        string       `db:"status"`
	PaidAt        *time.Time   `db:"paid_at"`
	VoidedAt      *time.Time   `db:"voided_at"`
	// The payment of a paid invoice (nil fields otherwise).
	PaymentID *string    `db:"payment_id"`
	Payer     *string    `db:"payer"`
	TxHash    *string    `db:"tx_hash"`
	Network   *string    `db:"network"`
	Confirmed *time.Time `db:"confirmed_at"`
}

// LoadInvoicePage returns the page of the invoice with id, in any merchant
// and mode (ids are unguessable); ok=false when there is none, including
// for an id that is not valid text (NUL, invalid UTF-8).
func LoadInvoicePage(ctx context.Context, q store.Querier, id string) (InvoicePage, bool, error) {
	if !validText(id) {
		return InvoicePage{}, false, nil
	}
	var rows []InvoicePage
	err := q.SelectContext(ctx, &rows, `SELECT i.mode, i.id, m.name AS merchant, i.amount, i.description, i.memo, i.invoice_number,
			i.due_at, i.status, i.paid_at, i.voided_at, p.id AS payment_id, p.payer, p.tx_hash, p.network, p.confirmed_at
		FROM invoices i JOIN merchants m ON m.id = i.merchant_id
		LEFT JOIN payments p ON p.merchant_id = i.merchant_id AND p.mode = i.mode AND p.id = i.payment_id
		WHERE i.id = $1`, id)
	if err != nil || len(rows) == 0 {
		return InvoicePage{}, false, store.Translate(err)
	}
	return rows[0], true, nil
}

// PlanPage is what a plan's checkout page shows, with the subscription the
// customer was sent back with after checkout.
type PlanPage struct {
	Mode         tenant.Mode  `db:"mode"`
	ID           string       `db:"id"`
	Merchant     string       `db:"merchant"`
	ProductName  string       `db:"product_name"`
	ProductDesc  *string      `db:"product_description"`
	Amount       money.Amount `db:"amount"`
	Interval     string       `db:"interval"`
	IntervalDays *int         `db:"interval_days"`
	UsageType    string       `db:"usage_type"`
	PricingJSON  []byte       `db:"pricing_model"`
	MeterName    *string      `db:"meter_name"`
	UnitLabel    *string      `db:"unit_label"`
	TrialDays    *int         `db:"trial_days"`
	// Subscription is the subscription asked for, when it is one to this
	// plan; nil otherwise.
	Subscription *PageSubscription `db:"-"`
}

// PageSubscription is a subscription as the plan page shows it.
type PageSubscription struct {
	ID                 string
	Status             string
	CurrentPeriodStart *time.Time
	CurrentPeriodEnd   *time.Time
	NextActionAt       *time.Time
	CancelAt           *time.Time
	EndedAt            *time.Time
	// The latest payment (the first charge of a licensed plan at checkout).
	LatestPaymentID *string
	LatestAmount    *money.Amount
	LatestTxHash    *string
}

type pageSubscriptionRow struct {
	ID                 *string       `db:"sub_id"`
	Status             *string       `db:"sub_status"`
	CurrentPeriodStart *time.Time    `db:"sub_period_start"`
	CurrentPeriodEnd   *time.Time    `db:"sub_period_end"`
	NextActionAt       *time.Time    `db:"sub_next_action_at"`
	CancelAt           *time.Time    `db:"sub_cancel_at"`
	EndedAt            *time.Time    `db:"sub_ended_at"`
	LatestPaymentID    *string       `db:"sub_latest_payment_id"`
	LatestAmount       *money.Amount `db:"pay_amount"`
	LatestTxHash       *string       `db:"pay_tx_hash"`
}

// Pricing returns a metered plan's pricing model.
func (p PlanPage) Pricing() (pricing.Model, error) { return pricing.Decode(p.PricingJSON) }

// LoadPlanPage returns the page of the plan with id, in any merchant and
// mode, with the subscription subscriptionID when it is one to this plan
// ("" for none); ok=false when there is no such plan, including for an id
// that is not valid text. A subscriptionID that is not valid text is
// ignored.
func LoadPlanPage(ctx context.Context, q store.Querier, id, subscriptionID string) (PlanPage, bool, error) {
	if !validText(id) {
		return PlanPage{}, false, nil
	}
	if !validText(subscriptionID) {
		subscriptionID = ""
	}
	var rows []struct {
		PlanPage
		pageSubscriptionRow
	}
	err := q.SelectContext(ctx, &rows, `SELECT p.mode, p.id, m.name AS merchant, pr.name AS product_name, pr.description AS product_description,
			p.amount, p.interval, p.interval_days, p.usage_type, p.pricing_model, me.display_name AS meter_name, me.unit_label, p.trial_days,
			s.id AS sub_id, s.status AS sub_status, s.current_period_start AS sub_period_start, s.current_period_end AS sub_period_end,
			s.next_action_at AS sub_next_action_at, s.cancel_at AS sub_cancel_at, s.ended_at AS sub_ended_at,
			s.latest_payment_id AS sub_latest_payment_id, lp.amount AS pay_amount, lp.tx_hash AS pay_tx_hash
		FROM plans p
		JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		JOIN merchants m ON m.id = p.merchant_id
		LEFT JOIN meters me ON me.merchant_id = p.merchant_id AND me.id = p.meter_id
		LEFT JOIN subscriptions s ON s.id = $2 AND s.merchant_id = p.merchant_id AND s.mode = p.mode AND s.plan_id = p.id
		LEFT JOIN payments lp ON lp.merchant_id = s.merchant_id AND lp.mode = s.mode AND lp.id = s.latest_payment_id
		WHERE p.id = $1`, id, subscriptionID)
	if err != nil || len(rows) == 0 {
		return PlanPage{}, false, store.Translate(err)
	}
	pg, r := rows[0].PlanPage, rows[0].pageSubscriptionRow
	if r.ID != nil && r.Status != nil {
		pg.Subscription = &PageSubscription{ID: *r.ID, Status: *r.Status, CurrentPeriodStart: r.CurrentPeriodStart,
			CurrentPeriodEnd: r.CurrentPeriodEnd, NextActionAt: r.NextActionAt, CancelAt: r.CancelAt, EndedAt: r.EndedAt,
			LatestPaymentID: r.LatestPaymentID, LatestAmount: r.LatestAmount, LatestTxHash: r.LatestTxHash}
	}
	return pg, true, nil
}

// validText reports whether s can be a PostgreSQL text value: valid UTF-8
// without NUL.
func validText(s string) bool { return fields.TextProblem(s) == "" }

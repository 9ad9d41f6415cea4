package wire

import "encoding/json"

// Invoice is a one-time invoice.
type Invoice struct {
	Object        string  `json:"object"` // "invoice"
	ID            string  `json:"id"`
	Amount        string  `json:"amount"`
	Status        string  `json:"status"`
	CheckoutURL   string  `json:"checkout_url"`
	Description   string  `json:"description"`
	Memo          *string `json:"memo"`
	InvoiceNumber *string `json:"invoice_number"`
	Recipient     *string `json:"recipient"`
	DueAt         *string `json:"due_at"`
	PaidAt        *string `json:"paid_at"`
	PaymentID     *string `json:"payment_id"`
	VoidedAt      *string `json:"voided_at"`
	CreatedAt     string  `json:"created_at"`
	Livemode      bool    `json:"livemode"`
}

// Meter is a named usage counter.
type Meter struct {
	Object        string  `json:"object"` // "meter"
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

// Feature is something customers can be entitled to.
type Feature struct {
	Object      string  `json:"object"` // "feature"
	ID          string  `json:"id"`
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	MeterID     *string `json:"meter_id"`
	UnitLabel   *string `json:"unit_label"`
	Description *string `json:"description"`
	CreatedAt   string  `json:"created_at"`
	Livemode    bool    `json:"livemode"`
}

// MeterEvent is one stored usage event.
type MeterEvent struct {
	Object         string          `json:"object"` // "meter_event"
	ID             string          `json:"id"`
	Meter          string          `json:"meter"`
	CustomerID     *string         `json:"customer_id"`
	Value          string          `json:"value"`
	EventTimestamp string          `json:"event_timestamp"`
	IdempotencyKey *string         `json:"idempotency_key"`
	Properties     json.RawMessage `json:"properties,omitempty"`
	CreatedAt      string          `json:"created_at"`
	Livemode       bool            `json:"livemode"`
	Deduplicated   bool            `json:"deduplicated"`
	// CancelledAt is present once the event was cancelled.
	CancelledAt *string `json:"cancelled_at,omitempty"`
}

// UsageSummary is a customer's usage of a meter over [from, to), and per
// window when asked for.
type UsageSummary struct {
	Object      string        `json:"object"` // "usage_summary"
	CustomerID  string        `json:"customer_id"`
	Meter       string        `json:"meter"`
	MeterKey    string        `json:"meter_key"`
	Aggregation string        `json:"aggregation"`
	From        string        `json:"from"`
	To          string        `json:"to"`
	Value       string        `json:"value"`
	Windows     []UsageWindow `json:"windows,omitempty"`
}

// UsageWindow is one window of a usage summary.
type UsageWindow struct {
	Start string `json:"start"`
	End   string `json:"end"`
	Value string `json:"value"`
}

// MeterEventBatch answers a batch of meter events: Data holds, in request
// order, a MeterEvent for each accepted event and a BatchError for each
// rejected one.
type MeterEventBatch struct {
	Object   string `json:"object"` // "list"
	Accepted int    `json:"accepted"`
	Rejected int    `json:"rejected"`
	Data     []any  `json:"data"`
}

// BatchError is a rejected event inside a batch result.
type BatchError struct {
	Object string      `json:"object"` // "error"
	Index  int         `json:"index"`
	Error  ErrorDetail `json:"error"`
}

// CreditGrant is the result of a credit grant.
type CreditGrant struct {
	Object       string `json:"object"` // "credit_grant"
	CustomerID   string `json:"customer_id"`
	Granted      string `json:"granted"`
	Balance      string `json:"balance"`
	EntryID      string `json:"entry_id"`
	Deduplicated bool   `json:"deduplicated"`
}

// CreditDebit is the result of a credit debit.
type CreditDebit struct {
	Object       string `json:"object"` // "credit_debit"
	CustomerID   string `json:"customer_id"`
	Requested    string `json:"requested"`
	Covered      string `json:"covered"`
	Shortfall    string `json:"shortfall"`
	Balance      string `json:"balance"`
	Deduplicated bool   `json:"deduplicated"`
}

// CreditBalance is a customer's balance; a customer without a credit
// account has no account_id, granted, consumed or expired. With one,
// balance = granted - consumed - expired.
type CreditBalance struct {
	Object     string  `json:"object"` // "credit_balance"
	CustomerID string  `json:"customer_id"`
	AccountID  string  `json:"account_id,omitempty"`
	Balance    string  `json:"balance"`
	Granted    *string `json:"granted,omitempty"`
	Consumed   *string `json:"consumed,omitempty"`
	// Expired is what grants lost by expiring unused, lifetime.
	Expired  *string `json:"expired,omitempty"`
	Currency string  `json:"currency"` // "usdc"
}

// EntitlementGrant is one grant of a feature to a customer.
type EntitlementGrant struct {
	Object      string  `json:"object"` // "entitlement_grant"
	ID          string  `json:"id"`
	Feature     string  `json:"feature"`
	CustomerID  string  `json:"customer_id"`
	LimitValue  *string `json:"limit_value"`
	StartsAt    string  `json:"starts_at"`
	ActiveUntil *string `json:"active_until"`
	CreatedAt   string  `json:"created_at"`
	Livemode    bool    `json:"livemode"`
}

// Entitlement is the answer to an access check; a boolean feature has no
// limit, used or remaining, and a metered one without a limit has no limit
// or remaining.
type Entitlement struct {
	Object     string  `json:"object"` // "entitlement"
	CustomerID string  `json:"customer_id"`
	Feature    string  `json:"feature"`
	Entitled   bool    `json:"entitled"`
	Reason     string  `json:"reason"`
	Limit      *string `json:"limit,omitempty"`
	Used       *string `json:"used,omitempty"`
	Remaining  *string `json:"remaining,omitempty"`
	Livemode   bool    `json:"livemode"`
}

// Payment is a confirmed payment.
type Payment struct {
	Object         string        `json:"object"` // "payment"; "upcoming_charge" for a preview
	ID             string        `json:"id,omitempty"`
	Amount         string        `json:"amount"`
	Currency       string        `json:"currency"` // "usdc"
	Status         string        `json:"status,omitempty"`
	AmountRefunded string        `json:"amount_refunded"`
	InvoiceID      *string       `json:"invoice_id"`
	SubscriptionID *string       `json:"subscription_id"`
	CustomerID     *string       `json:"customer_id"`
	Payer          *string       `json:"payer"`
	Payee          *string       `json:"payee"`
	Network        string        `json:"network"`
	TxHash         *string       `json:"tx_hash"`
	ConfirmedAt    *string       `json:"confirmed_at"`
	PeriodStart    *string       `json:"period_start,omitempty"`
	PeriodEnd      *string       `json:"period_end,omitempty"`
	Lines          []PaymentLine `json:"lines,omitempty"`
	CreatedAt      string        `json:"created_at,omitempty"`
	Livemode       bool          `json:"livemode"`
}

// Refund is money returned to a payment's payer.
type Refund struct {
	Object    string  `json:"object"` // "refund"
	ID        string  `json:"id"`
	PaymentID string  `json:"payment_id"`
	Amount    string  `json:"amount"`
	Reason    *string `json:"reason"`
	Status    string  `json:"status"`
	TxHash    *string `json:"tx_hash"`
	CreatedAt string  `json:"created_at"`
	Livemode  bool    `json:"livemode"`
}

// TestClock is a merchant's test-mode clock.
type TestClock struct {
	Object string `json:"object"` // "test_clock"
	Now    string `json:"now"`
}

// Subscription is a customer's subscription to a plan.
type Subscription struct {
	Object             string        `json:"object"` // "subscription"
	ID                 string        `json:"id"`
	Status             string        `json:"status"`
	PlanID             string        `json:"plan_id"`
	ProductID          *string       `json:"product_id"`
	CustomerID         *string       `json:"customer_id"`
	Payer              *string       `json:"payer"`
	UsageType          *string       `json:"usage_type"`
	Amount             *string       `json:"amount"`
	Interval           *string       `json:"interval"`
	IntervalDays       *int          `json:"interval_days"`
	Meter              *string       `json:"meter,omitempty"`
	PricingModel       *PricingModel `json:"pricing_model,omitempty"`
	CurrentPeriodStart *string       `json:"current_period_start"`
	CurrentPeriodEnd   *string       `json:"current_period_end"`
	CancelAt           *string       `json:"cancel_at"`
	EndedAt            *string       `json:"ended_at"`
	LatestPaymentID    *string       `json:"latest_payment_id"`
	// PendingPlanID is the plan the next period starts on, when a change
	// waits for the period's end (from PendingChangeAt); null when none.
	PendingPlanID   *string `json:"pending_plan_id"`
	PendingChangeAt *string `json:"pending_change_at"`
	// TrialEnd is when a trial ends and its first period starts; null
	// when none.
	TrialEnd  *string   `json:"trial_end"`
	Discount  *Discount `json:"discount"`
	CreatedAt string    `json:"created_at"`
	Livemode  bool      `json:"livemode"`
}

// Customer is a merchant's customer.
type Customer struct {
	Object             string  `json:"object"` // "customer"
	ID                 string  `json:"id"`
	ExternalCustomerID *string `json:"external_customer_id"`
	CreatedAt          string  `json:"created_at"`
	Livemode           bool    `json:"livemode"`
}

// Product is what a plan sells.
type Product struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// PlanFeature is a feature a plan grants its subscribers.
type PlanFeature struct {
	FeatureKey string  `json:"feature_key"`
	LimitValue *string `json:"limit_value"`
}

// Plan is a subscription plan (a price of a product).
type Plan struct {
	Object       string        `json:"object"` // "plan"
	ID           string        `json:"id"`
	Amount       string        `json:"amount"`
	Interval     string        `json:"interval"`
	IntervalDays *int          `json:"interval_days"`
	UsageType    string        `json:"usage_type"`
	Meter        *string       `json:"meter"`
	PricingModel *PricingModel `json:"pricing_model"`
	Features     []PlanFeature `json:"features"`
	TrialDays    *int          `json:"trial_days"`
	Product      Product       `json:"product"`
	CheckoutURL  string        `json:"checkout_url"`
	CreatedAt    string        `json:"created_at"`
	Livemode     bool          `json:"livemode"`
}

// Alert is a threshold that emits alert.triggered when crossed.
type Alert struct {
	Object     string  `json:"object"` // "alert"
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Name       *string `json:"name"`
	CustomerID *string `json:"customer_id"`
	Meter      *string `json:"meter"`
	Threshold  *string `json:"threshold"`
	Percent    *int64  `json:"percent"`
	Status     string  `json:"status"`
	CreatedAt  string  `json:"created_at"`
	ArchivedAt *string `json:"archived_at"`
	Livemode   bool    `json:"livemode"`
}

// AlertTrigger is the data of alert.triggered; fields that do not apply to
// the alert's type are null.
type AlertTrigger struct {
	Object         string  `json:"object"` // "alert_trigger"
	AlertID        string  `json:"alert_id"`
	Type           string  `json:"type"`
	CustomerID     *string `json:"customer_id"`
	SubscriptionID *string `json:"subscription_id"`
	Meter          *string `json:"meter"`
	Threshold      *string `json:"threshold"`
	Percent        *int64  `json:"percent"`
	Value          string  `json:"value"`
	PeriodStart    *string `json:"period_start"`
	PeriodEnd      *string `json:"period_end"`
	TriggeredAt    string  `json:"triggered_at"`
}

// SubscriptionChangePreview is what a plan change would do (preview true).
type SubscriptionChangePreview struct {
	Object         string `json:"object"` // "subscription_change_preview"
	SubscriptionID string `json:"subscription_id"`
	PlanID         string `json:"plan_id"`
	At             string `json:"at" doc:"now or period_end."`
	EffectiveAt    string `json:"effective_at" doc:"When the plan changes: now, or the current period's end."`
	AmountDueNow   string `json:"amount_due_now" doc:"The proration charged now (base units; 0 when none)."`
	CreditGranted  string `json:"credit_granted" doc:"The proration granted as prepaid credits (base units; 0 when none)."`
	// Lines explain amount_due_now or credit_granted (a proration line,
	// then a discount line when the subscription's discount changes it),
	// empty when nothing moves now.
	Lines      []PaymentLine `json:"lines"`
	NextCharge NextCharge    `json:"next_charge"`
}

// NextCharge is the next period's charge after a change: a licensed plan's
// amount, a metered plan's cap.
type NextCharge struct {
	Amount string `json:"amount"`
	At     string `json:"at"`
}

// PlanMigration is a plan migration's answer: how many subscriptions move
// at their period's end and one period's amounts before and after.
type PlanMigration struct {
	Object        string `json:"object"` // "plan_migration"
	From          string `json:"from"`
	To            string `json:"to"`
	Subscriptions int64  `json:"subscriptions"`
	AmountBefore  string `json:"amount_before"`
	AmountAfter   string `json:"amount_after"`
	Effective     string `json:"effective"` // "period_end"
	// AuthorizationRequired counts the subscriptions left out because
	// their payer authorized less per period than to's amount.
	AuthorizationRequired int64 `json:"authorization_required" doc:"Subscriptions left out: their payer authorized less per period than to's amount. Each is scheduled once its payer authorizes the new amount at its checkout_url."`
	// NeedsAuthorization lists them (the first 1,000, oldest first).
	NeedsAuthorization []MigrationAuthorization `json:"needs_authorization" doc:"The subscriptions left out for their authorization, oldest first (at most 1,000: run the migration again once they have authorized to list the rest)."`
}

// MigrationAuthorization is a subscription a migration left out: what its
// payer authorized, and the page where the payer authorizes the target
// plan's amount (the change to it at the period's end is made then).
type MigrationAuthorization struct {
	SubscriptionID   string `json:"subscription_id"`
	AuthorizedAmount string `json:"authorized_amount" doc:"What the payer authorized per period (base units)."`
	CheckoutURL      string `json:"checkout_url" doc:"Where the payer authorizes the new amount; the change at the period's end is scheduled then."`
}

// PortalSession is a customer portal link (POST /v1/portal_sessions). Its
// url carries the session's secret and is shown in this answer only.
type PortalSession struct {
	Object     string  `json:"object"` // "portal_session"
	ID         string  `json:"id"`
	CustomerID string  `json:"customer_id"`
	URL        string  `json:"url" doc:"The portal's link for this customer, good for one hour; send the customer there."`
	ReturnURL  *string `json:"return_url"`
	ExpiresAt  string  `json:"expires_at"`
}

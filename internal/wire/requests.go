package wire

// The public JSON form of every request body and tool argument object: one
// struct per request, read only for its description. Package apispec turns
// them into the JSON Schemas of the MCP tools and of the OpenAPI document, so
// the two descriptions cannot drift; the domain decoders (invoices.Decode,
// credits.DecodeGrant, …) remain what reads and validates a request, and a
// test checks each decoder reads exactly the fields its struct names.
//
// Tags: `json` names the field (omitempty: optional, else required); `doc`
// is its description; `schema` adds JSON Schema keywords, comma-separated:
// minLength, maxLength, minimum, maximum, minItems, maxItems, pattern,
// format, enum (values separated by |).

// Amount is an amount of USDC base units in a request: a JSON integer or a
// string of digits.
type Amount string

// Time is an ISO-8601 (RFC 3339) date-time in a request.
type Time string

// InvoiceRequest is POST /v1/invoices and the create_invoice tool.
type InvoiceRequest struct {
	Amount        Amount  `json:"amount" doc:"The amount due: a positive integer of USDC base units (6 decimals: 9000000 is 9.00 USDC), as a JSON integer or a string of digits."`
	Description   string  `json:"description" doc:"What the invoice is for; shown on the checkout page." schema:"minLength=1,maxLength=500"`
	Memo          *string `json:"memo,omitempty" doc:"A note for your records." schema:"maxLength=200"`
	InvoiceNumber *string `json:"invoice_number,omitempty" doc:"Your invoice number." schema:"maxLength=100"`
	Recipient     *string `json:"recipient,omitempty" doc:"A label or email of the payer, for your records." schema:"maxLength=200"`
	DueAt         *Time   `json:"due_at,omitempty" doc:"When payment is due (ISO-8601 date-time)."`
}

// MeterRequest is POST /v1/meters and the create_meter tool.
type MeterRequest struct {
	Key           string  `json:"key" doc:"The event name usage is sent with (event_name). Letters, digits, dot, dash and underscore; unique per account and mode: a repeat returns the existing meter." schema:"maxLength=100,pattern=^[A-Za-z0-9._-]+$"`
	DisplayName   string  `json:"display_name" doc:"A name for people." schema:"minLength=1,maxLength=200"`
	Aggregation   *string `json:"aggregation,omitempty" doc:"How a period's events combine: sum (default) adds their values, count counts them, max keeps the largest, last the latest." schema:"enum=sum|count|max|last"`
	EventValueKey *string `json:"event_value_key,omitempty" doc:"The event property holding the quantity, used when an event has no value; if omitted each event counts as 1." schema:"minLength=1,maxLength=200"`
	UnitLabel     *string `json:"unit_label,omitempty" doc:"The unit shown next to quantities, e.g. tokens." schema:"maxLength=100"`
	Description   *string `json:"description,omitempty" doc:"What the meter counts, for people." schema:"maxLength=500"`
}

// FeatureRequest is POST /v1/features and the create_feature tool.
type FeatureRequest struct {
	Key         string  `json:"key" doc:"The feature's key, used to grant and check it. Letters, digits, dot, dash and underscore; unique per account and mode: a repeat returns the existing feature." schema:"maxLength=100,pattern=^[A-Za-z0-9._-]+$"`
	Name        string  `json:"name" doc:"A name for people." schema:"minLength=1,maxLength=200"`
	Type        *string `json:"type,omitempty" doc:"boolean (default): on or off; metered: usage of a meter counts against a granted limit." schema:"enum=boolean|metered"`
	Meter       *string `json:"meter,omitempty" doc:"Required for a metered feature, refused for a boolean one: the id (meter_…) of the meter whose usage counts."`
	UnitLabel   *string `json:"unit_label,omitempty" doc:"The unit shown next to a metered feature's limit and usage, e.g. requests." schema:"maxLength=100"`
	Description *string `json:"description,omitempty" doc:"What the feature gives, for people." schema:"maxLength=500"`
}

// MeterEventRequest is one usage event: POST /v1/meter-events with one
// event, an item of a batch, and the create_meter_event tool.
type MeterEventRequest struct {
	EventName          string         `json:"event_name" doc:"The key of an existing meter, else unknown_meter."`
	Value              *Amount        `json:"value,omitempty" doc:"The quantity: a non-negative integer, as a JSON integer or a string of digits. Count meters default it to 1; other meters without a value take it from properties[event_value_key], else missing_value."`
	CustomerID         *string        `json:"customer_id,omitempty" doc:"The customer's id (cus_…)."`
	ExternalCustomerID *string        `json:"external_customer_id,omitempty" doc:"Your own id for the customer; a customer is created the first time it is seen." schema:"maxLength=255"`
	Timestamp          *Time          `json:"timestamp,omitempty" doc:"When the usage happened (ISO-8601 date-time); defaults to now."`
	IdempotencyKey     *string        `json:"idempotency_key,omitempty" doc:"Makes a retry safe: a replay with the same key returns the stored event with deduplicated true and does not count twice; the same key with other fields is invalid_request." schema:"maxLength=255"`
	Properties         map[string]any `json:"properties,omitempty" doc:"Arbitrary JSON stored with the event."`
}

// MeterEventBatchRequest is POST /v1/meter-events with a batch.
type MeterEventBatchRequest struct {
	Events []MeterEventRequest `json:"events" doc:"1 to 500 events, each accepted or rejected on its own." schema:"minItems=1,maxItems=500"`
}

// CreditGrantRequest is POST /v1/credit_grants and the grant_credits tool.
type CreditGrantRequest struct {
	Amount             Amount  `json:"amount" doc:"Credits to add: a positive integer of USDC base units (6 decimals: 9000000 is 9.00 USDC), as a JSON integer or a string of digits."`
	CustomerID         *string `json:"customer_id,omitempty" doc:"The customer's id (cus_…). Give this or external_customer_id, else customer_required."`
	ExternalCustomerID *string `json:"external_customer_id,omitempty" doc:"Your own id for the customer; a customer is created the first time it is seen. Give this or customer_id." schema:"maxLength=255"`
	Reason             *string `json:"reason,omitempty" doc:"A ledger note; default \"API grant\"." schema:"maxLength=300"`
	ExpiresAt          *Time   `json:"expires_at,omitempty" doc:"When the granted credits expire (ISO-8601 date-time, in the future); default never."`
	IdempotencyKey     *string `json:"idempotency_key,omitempty" doc:"A key of your choosing that makes a retry safe: a repeat with the same key and parameters returns the first result with deduplicated true; with other parameters it is invalid_request." schema:"maxLength=255"`
}

// CreditDebitRequest is POST /v1/credit_debits and the debit_credits tool.
type CreditDebitRequest struct {
	Amount             Amount  `json:"amount" doc:"Credits to draw down: a positive integer of USDC base units (6 decimals: 9000000 is 9.00 USDC), as a JSON integer or a string of digits."`
	CustomerID         *string `json:"customer_id,omitempty" doc:"The customer's id (cus_…). Give this or external_customer_id, else customer_required; the customer needs a credit account, else no_credit_account."`
	ExternalCustomerID *string `json:"external_customer_id,omitempty" doc:"Your own id for the customer. Give this or customer_id." schema:"maxLength=255"`
	Reason             *string `json:"reason,omitempty" doc:"A ledger note; default \"API debit\"." schema:"maxLength=300"`
	AllowNegative      *bool   `json:"allow_negative,omitempty" doc:"false (default): cover only what the balance allows and return the rest as shortfall; true: cover it all, letting the balance go below zero."`
	IdempotencyKey     *string `json:"idempotency_key,omitempty" doc:"A key of your choosing that makes a retry safe: a repeat with the same key and parameters returns the first result with deduplicated true; with other parameters it is invalid_request." schema:"maxLength=255"`
}

// EntitlementGrantRequest is POST /v1/entitlement_grants and the
// grant_entitlement tool.
type EntitlementGrantRequest struct {
	FeatureKey         string  `json:"feature_key" doc:"The key of an existing feature, else unknown_feature."`
	CustomerID         *string `json:"customer_id,omitempty" doc:"The customer's id (cus_…). Give this or external_customer_id, else customer_required."`
	ExternalCustomerID *string `json:"external_customer_id,omitempty" doc:"Your own id for the customer; a customer is created the first time it is seen. Give this or customer_id." schema:"maxLength=255"`
	LimitValue         *Amount `json:"limit_value,omitempty" doc:"For a metered feature, the usage allowed (in the meter's units): a non-negative integer, as a JSON integer or a string of digits; default unlimited."`
	ActiveUntil        *Time   `json:"active_until,omitempty" doc:"When the entitlement lapses (ISO-8601 date-time); default never."`
}

// ListParams are the parameters of every list: the query of GET
// /v1/{resource} and the arguments of the list_* tools.
type ListParams struct {
	Limit  *int  `json:"limit,omitempty" doc:"How many objects to return, 1 to 100; default 25." schema:"minimum=1,maximum=100"`
	Before *Time `json:"before,omitempty" doc:"Cursor: the previous page's next_cursor, to get the page after it (older objects)."`
}

// CustomerArgs names a customer: the get_credit_balance tool (the {id} of
// GET /v1/customers/{id}/credit_balance).
type CustomerArgs struct {
	CustomerID string `json:"customer_id" doc:"The customer's id (cus_…); an unknown id is unknown_customer."`
}

// EntitlementCheckArgs are the check_entitlement tool's arguments (the path
// of GET /v1/customers/{id}/entitlements/{feature_key}).
type EntitlementCheckArgs struct {
	CustomerID string `json:"customer_id" doc:"The customer's id (cus_…); an unknown id is unknown_customer."`
	FeatureKey string `json:"feature_key" doc:"The feature's key; an unknown key is unknown_feature."`
}

// PlanFeatureRequest is a feature a plan grants its subscribers.
type PlanFeatureRequest struct {
	FeatureKey string  `json:"feature_key" doc:"The key of an existing feature."`
	LimitValue *Amount `json:"limit_value,omitempty" doc:"For a metered feature: the usage limit, a non-negative integer."`
}

// PlanFeatureEntry is an item of a plan's features: a feature key, or a
// PlanFeatureRequest object (its schema is anyOf the two).
type PlanFeatureEntry PlanFeatureRequest

// PlanRequest is POST /v1/plans and the create_plan tool.
type PlanRequest struct {
	Name         string             `json:"name" doc:"The product's name, shown at checkout." schema:"minLength=2,maxLength=80"`
	Amount       Amount             `json:"amount" doc:"USDC base units per period (6 decimals: 9000000 is 9.00 USDC), at least 1000000 (1.00 USDC), else amount_too_small; for a metered plan the per-period cap."`
	Interval     string             `json:"interval" doc:"How long a period is: week (7 days), biweekly (14), month or year (calendar periods anchored on the start), custom (interval_days)." schema:"enum=week|biweekly|month|year|custom"`
	IntervalDays *int               `json:"interval_days,omitempty" doc:"Days per period, required with custom and refused with other intervals (invalid_interval)." schema:"minimum=1,maximum=365"`
	Description  *string            `json:"description,omitempty" doc:"The product's description." schema:"maxLength=300"`
	UsageType    *string            `json:"usage_type,omitempty" doc:"licensed (default): amount is charged each period; metered: each period's usage of meter is rated with pricing_model and charged up to amount." schema:"enum=licensed|metered"`
	Meter        *string            `json:"meter,omitempty" doc:"Required for metered: the id (meter_…) of the meter whose usage is billed."`
	PricingModel map[string]any     `json:"pricing_model,omitempty" doc:"Required for metered: {kind: per_unit, unitAmount, includedUnits} | {kind: package, unitAmount, packageSize} | {kind: tiered, mode: graduated|volume, tiers: [{upTo, unitAmount}], last upTo null} | {kind: flat, amount}; amounts in base units."`
	Features     []PlanFeatureEntry `json:"features,omitempty" doc:"Features subscribers are entitled to while the subscription is live: feature keys, or objects with a limit." schema:"maxItems=50"`
	TrialDays    *int               `json:"trial_days,omitempty" doc:"Free days a subscription starts with: checkout authorizes the payer without charging, the subscription is trialing with the plan's features, and the first period starts (and is charged) at trial_end. One trial per customer and product." schema:"minimum=1,maximum=730"`
}

// CancelRequest is POST /v1/subscriptions/{id}/cancel.
type CancelRequest struct {
	AtPeriodEnd *bool `json:"at_period_end,omitempty" doc:"true (default): end when the current period ends; false: end now, emitting subscription.expired."`
}

// ClockAdvanceRequest is POST /v1/test_helpers/clock/advance and the
// advance_test_clock tool.
type ClockAdvanceRequest struct {
	To *Time   `json:"to,omitempty" doc:"The new time (ISO-8601 date-time), not before the clock's. Give to or by."`
	By *string `json:"by,omitempty" doc:"How far to move: a duration with units s, m, h, d, e.g. 30d or 1d12h. Give to or by."`
}

// ObjectArgs names one object: the get_* tools (the {id} of the read
// endpoints).
type ObjectArgs struct {
	ID string `json:"id" doc:"The object's id."`
}

// CheckoutPayRequest is POST /checkout/{id}/pay, form-encoded from the
// hosted page or JSON.
type CheckoutPayRequest struct {
	Payer              string  `json:"payer" doc:"The paying wallet; test mode pays with a magic wallet."`
	ExternalCustomerID *string `json:"external_customer_id,omitempty" doc:"For plans: your id for the customer; default the payer address in lower case." schema:"maxLength=255"`
	Coupon             *string `json:"coupon,omitempty" doc:"For plans: a coupon's code (any letter case) or id, redeemed with the checkout; the page's ?coupon= fills it. An unusable coupon is invalid_coupon."`
}

// UsageArgs are the get_usage tool's arguments (the path and query of GET
// /v1/customers/{id}/usage).
type UsageArgs struct {
	CustomerID string  `json:"customer_id" doc:"The customer's id (cus_…); an unknown id is unknown_customer."`
	Meter      string  `json:"meter" doc:"The meter: its id (meter_…) or its key; unknown is unknown_meter."`
	From       *Time   `json:"from,omitempty" doc:"Start of the span, included (ISO-8601 date-time); default the start of the customer's current period on a live subscription whose plan uses the meter, else 30 days before to."`
	To         *Time   `json:"to,omitempty" doc:"End of the span, excluded (ISO-8601 date-time); default now. from must be before to."`
	Window     *string `json:"window,omitempty" doc:"Split the span into UTC windows: hour, day or month; at most 1000 windows." schema:"enum=hour|day|month"`
}

// AlertRequest is POST /v1/alerts and the create_alert tool.
type AlertRequest struct {
	Type               string  `json:"type" doc:"usage_threshold (a customer's usage of meter in the current period reaches threshold), credit_balance_below (a credit balance drops from at least threshold to below it) or spend_threshold (a metered subscription's rated amount in its period reaches percent of its plan's amount, the cap)." schema:"enum=usage_threshold|credit_balance_below|spend_threshold"`
	Meter              *string `json:"meter,omitempty" doc:"usage_threshold only, required: the meter's id (meter_…)."`
	Threshold          *Amount `json:"threshold,omitempty" doc:"usage_threshold: a quantity in the meter's units; credit_balance_below: USDC base units. A non-negative integer, as a JSON integer or a string of digits."`
	Percent            *int64  `json:"percent,omitempty" doc:"spend_threshold only, required: percent of the plan's cap, 1 to 100." schema:"minimum=1,maximum=100"`
	CustomerID         *string `json:"customer_id,omitempty" doc:"Watch one customer (cus_…); without it or external_customer_id, every customer."`
	ExternalCustomerID *string `json:"external_customer_id,omitempty" doc:"Watch one customer by your own id (upserted)." schema:"maxLength=255"`
	Name               *string `json:"name,omitempty" doc:"A name for your records." schema:"maxLength=200"`
}

// SubscriptionChangeRequest is POST /v1/subscriptions/{id}/change.
type SubscriptionChangeRequest struct {
	Plan    string  `json:"plan" doc:"The plan to move to (price_…): of this account and mode, with the subscription's usage_type. The current plan clears a pending change."`
	At      *string `json:"at,omitempty" doc:"period_end (default): the next period starts on the plan; now (licensed plans only): at once, the rest of the period prorated, charged or credited." schema:"enum=now|period_end"`
	Preview *bool   `json:"preview,omitempty" doc:"true: answer what the change would do (subscription_change_preview) and change nothing."`
}

// ChangeSubscriptionArgs are the change_subscription tool's arguments: a
// tool changes plans at the period's end only.
type ChangeSubscriptionArgs struct {
	ID   string  `json:"id" doc:"The subscription (sub_…)."`
	Plan string  `json:"plan" doc:"The plan to move to (price_…), of the same usage_type; the current plan clears a pending change."`
	At   *string `json:"at,omitempty" doc:"period_end, the only value a tool may use (default): the next period starts on the plan." schema:"enum=period_end"`
}

// PreviewSubscriptionChangeArgs are the preview_subscription_change tool's
// arguments.
type PreviewSubscriptionChangeArgs struct {
	ID   string  `json:"id" doc:"The subscription (sub_…)."`
	Plan string  `json:"plan" doc:"The plan to move to (price_…), of the same usage_type."`
	At   *string `json:"at,omitempty" doc:"period_end (default) or now (licensed plans: the prorated amount due now, or credited)." schema:"enum=now|period_end"`
}

// PlanMigrationRequest is POST /v1/plans/{id}/migrate.
type PlanMigrationRequest struct {
	To      string `json:"to" doc:"The plan the subscribers move to at their period's end (price_…), of the same usage_type."`
	Preview *bool  `json:"preview,omitempty" doc:"true: count and sum, and schedule nothing."`
}

// PortalSessionRequest is POST /v1/portal_sessions and the
// create_portal_session tool.
type PortalSessionRequest struct {
	CustomerID         *string  `json:"customer_id,omitempty" doc:"The customer (cus_…); or external_customer_id."`
	ExternalCustomerID *string  `json:"external_customer_id,omitempty" doc:"The customer by your own id; it must exist." schema:"maxLength=255"`
	ReturnURL          *string  `json:"return_url,omitempty" doc:"Where the portal's back link leads: https (http only for localhost)." schema:"maxLength=2048"`
	Plans              []string `json:"plans,omitempty" doc:"Plans (price_…) the customer may switch to in the portal; none: no switching." schema:"maxItems=20"`
}

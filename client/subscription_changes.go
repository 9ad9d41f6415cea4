package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// ChangeParams is a plan change (POST /v1/subscriptions/{id}/change).
type ChangeParams struct {
	Plan string `json:"plan"` // price_… of the same usage type
	// At is "period_end" (the default when empty) or "now" (licensed
	// plans: the rest of the period is prorated, charged or credited).
	At string `json:"at,omitempty"`
	// Preview, on the params of PreviewSubscriptionChange, asks for what
	// the change would do; ChangeSubscription leaves it false.
	Preview bool `json:"preview,omitempty"`
}

// ChangeSubscription moves a subscription to another plan, now or at its
// period's end, and returns it after the change. A change above what the
// payer authorized is an *Error of code authorization_required whose
// CheckoutURL is where the payer authorizes it; a failed proration charge
// is payment_failed.
func (c *Client) ChangeSubscription(ctx context.Context, id string, p ChangeParams, opts ...CallOption) (*Subscription, error) {
	p.Preview = false
	return create[Subscription](ctx, c, "/v1/subscriptions/"+url.PathEscape(id)+"/change", p, true, opts)
}

// ChangePreview is what a plan change would do (object
// "subscription_change_preview"). Amounts are base units.
type ChangePreview struct {
	Object         string          `json:"object"`
	SubscriptionID string          `json:"subscription_id"`
	PlanID         string          `json:"plan_id"`
	At             string          `json:"at"`
	EffectiveAt    time.Time       `json:"effective_at"`
	AmountDueNow   string          `json:"amount_due_now"`
	CreditGranted  string          `json:"credit_granted"`
	Lines          json.RawMessage `json:"lines"`
	NextCharge     struct {
		Amount string    `json:"amount"`
		At     time.Time `json:"at"`
	} `json:"next_charge"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *ChangePreview) setRaw(b json.RawMessage) { v.Raw = b }

// PreviewSubscriptionChange answers what ChangeSubscription would do with
// p, changing nothing.
func (c *Client) PreviewSubscriptionChange(ctx context.Context, id string, p ChangeParams, opts ...CallOption) (*ChangePreview, error) {
	p.Preview = true
	return create[ChangePreview](ctx, c, "/v1/subscriptions/"+url.PathEscape(id)+"/change", p, true, opts)
}

// MigrateParams moves a plan's subscribers (POST /v1/plans/{id}/migrate).
type MigrateParams struct {
	To      string `json:"to"`
	Preview bool   `json:"preview,omitempty"`
}

// PlanMigration counts the subscriptions a migration moves at their
// period's end and sums one period's amounts before and after.
type PlanMigration struct {
	Object        string `json:"object"` // "plan_migration"
	From          string `json:"from"`
	To            string `json:"to"`
	Subscriptions int64  `json:"subscriptions"`
	AmountBefore  string `json:"amount_before"`
	AmountAfter   string `json:"amount_after"`
	Effective     string `json:"effective"`
	// AuthorizationRequired counts the subscriptions left out because
	// their payer authorized less per period than To's amount;
	// NeedsAuthorization lists them (the first 1,000), each with the page
	// where the payer authorizes the change, which is scheduled then.
	AuthorizationRequired int64                    `json:"authorization_required"`
	NeedsAuthorization    []MigrationAuthorization `json:"needs_authorization"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// MigrationAuthorization is a subscription a migration left out until its
// payer authorizes the new amount at CheckoutURL.
type MigrationAuthorization struct {
	SubscriptionID   string `json:"subscription_id"`
	AuthorizedAmount string `json:"authorized_amount"` // base units per period
	CheckoutURL      string `json:"checkout_url"`
}

func (v *PlanMigration) setRaw(b json.RawMessage) { v.Raw = b }

// MigratePlan schedules a change to p.To at the period's end for every
// live subscription of the plan (with p.Preview, only counts them).
func (c *Client) MigratePlan(ctx context.Context, planID string, p MigrateParams, opts ...CallOption) (*PlanMigration, error) {
	return create[PlanMigration](ctx, c, "/v1/plans/"+url.PathEscape(planID)+"/migrate", p, true, opts)
}

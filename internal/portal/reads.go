package portal

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// What the portal's pages read. Each read is bounded: a customer with
// thousands of payments costs the overview no more than one with five.
// Every statement filters on the session's merchant, mode and customer, so
// no id put in a path or form reaches another's rows.

// Bounds of the overview's lists.
const (
	MaxSubscriptions = 20
	RecentPayments   = 5
	LedgerEntries    = 10
	MaxFeatures      = 100
	PaymentsPerPage  = 25
)

// ForCustomer opens customerID of scope s at now for these reads outside a
// portal session: the merchant dashboard shows a customer with the reads
// its portal shows it with. The caller has checked the customer is the
// scope's.
func ForCustomer(s tenant.Scope, customerID string, now time.Time) Open {
	return Open{Session: Session{MerchantID: s.MerchantID, Mode: s.Mode, CustomerID: customerID}, Now: now}
}

// Subscription is a subscription with its product's name.
type Subscription struct {
	subscriptions.Subscription
	ProductName *string `db:"product_name"`
}

// Subscriptions returns the customer's newest subscriptions, at most
// MaxSubscriptions.
func Subscriptions(ctx context.Context, q store.Querier, o Open) ([]Subscription, error) {
	rows := []Subscription{}
	err := q.SelectContext(ctx, &rows, `SELECT x.*, pr.name AS product_name FROM (
			SELECT `+subscriptions.Columns+` FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3
			ORDER BY created_at DESC, seq DESC LIMIT $4) x
		LEFT JOIN products pr ON pr.merchant_id = x.merchant_id AND pr.id = x.product_id
		ORDER BY x.created_at DESC, x.seq DESC`, o.MerchantID, o.Mode, o.CustomerID, MaxSubscriptions)
	return rows, store.Translate(err)
}

// Subscription returns the customer's subscription with id; anything else
// (another customer's, merchant's or mode's) is resource_not_found.
func (o Open) Subscription(ctx context.Context, q store.Querier, subscriptionID string) (subscriptions.Subscription, error) {
	x, err := subscriptions.Get(ctx, q, o.Scope(), subscriptionID)
	if err == nil && (x.CustomerID == nil || *x.CustomerID != o.CustomerID) {
		err = apperr.New(apperr.ResourceNotFound, "no subscription %q", apperr.Clip(subscriptionID))
	}
	return x, err
}

// Plan is a plan the customer may switch to, as the portal names it.
type Plan struct {
	ID           string       `db:"id"`
	ProductName  string       `db:"product_name"`
	Amount       money.Amount `db:"amount"`
	Interval     string       `db:"interval"`
	IntervalDays *int         `db:"interval_days"`
	UsageType    string       `db:"usage_type"`
}

// Plans returns the session's plans, in the order the merchant gave them.
func Plans(ctx context.Context, q store.Querier, o Open) ([]Plan, error) {
	return PlansByID(ctx, q, o, o.Plans)
}

// PlansByID returns the scope's plans with ids, in that order (unknown
// ids left out).
func PlansByID(ctx context.Context, q store.Querier, o Open, ids []string) ([]Plan, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []Plan
	err := q.SelectContext(ctx, &rows, `SELECT p.id, pr.name AS product_name, p.amount, p.interval, p.interval_days, p.usage_type
		FROM plans p JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		WHERE p.merchant_id = $1 AND p.mode = $2 AND p.id = ANY($3) ORDER BY array_position($3, p.id)`,
		o.MerchantID, o.Mode, pq.StringArray(ids))
	return rows, store.Translate(err)
}

// LedgerEntry is one entry of the customer's credit ledger.
type LedgerEntry struct {
	ID          string       `db:"id"`
	Kind        string       `db:"kind"` // grant, debit, expiry
	Amount      money.Amount `db:"amount"`
	Reason      *string      `db:"reason"`
	EffectiveAt time.Time    `db:"effective_at"`
	ExpiresAt   *time.Time   `db:"expires_at"`
}

// Ledger returns the customer's newest credit ledger entries, at most
// LedgerEntries; amounts are signed (a debit or expiry is negative).
func Ledger(ctx context.Context, q store.Querier, o Open) ([]LedgerEntry, error) {
	rows := []LedgerEntry{}
	err := q.SelectContext(ctx, &rows, `SELECT e.id, e.kind, e.amount, o.reason, e.effective_at, e.expires_at
		FROM credit_accounts a
		JOIN credit_entries e ON e.merchant_id = a.merchant_id AND e.account_id = a.id
		LEFT JOIN credit_operations o ON o.merchant_id = e.merchant_id AND o.id = e.operation_id
		WHERE a.merchant_id = $1 AND a.mode = $2 AND a.customer_id = $3
		ORDER BY e.seq DESC LIMIT $4`, o.MerchantID, o.Mode, o.CustomerID, LedgerEntries)
	return rows, store.Translate(err)
}

// Feature is one of the customer's entitlements, evaluated at the
// session's now (without usage: a metered feature shows its limit).
type Feature struct {
	Key         string     `db:"key"`
	Name        string     `db:"name"`
	Type        string     `db:"type"`
	Limit       *string    `db:"limit_value"`
	StartsAt    time.Time  `db:"starts_at"`
	ActiveUntil *time.Time `db:"active_until"`
	GraceUntil  *time.Time `db:"grace_until"`
	RevokedAt   *time.Time `db:"revoked_at"`
	Entitled    bool       `db:"-"`
	Reason      string     `db:"-"`
}

// Features returns the customer's entitlements by feature key, at most
// MaxFeatures, revoked ones left out.
func Features(ctx context.Context, q store.Querier, o Open) ([]Feature, error) {
	rows := []Feature{}
	err := q.SelectContext(ctx, &rows, `SELECT f.key, f.name, f.type, e.limit_value::text AS limit_value, e.starts_at, e.active_until,
			e.grace_until, e.revoked_at
		FROM entitlements e JOIN features f ON f.merchant_id = e.merchant_id AND f.id = e.feature_id
		WHERE e.merchant_id = $1 AND e.mode = $2 AND e.customer_id = $3 AND e.revoked_at IS NULL
		ORDER BY f.key LIMIT $4`, o.MerchantID, o.Mode, o.CustomerID, MaxFeatures)
	if err != nil {
		return nil, store.Translate(err)
	}
	for i := range rows {
		f := &rows[i]
		f.Entitled, f.Reason = entitlements.Evaluate(entitlements.State{Granted: true, RevokedAt: f.RevokedAt, StartsAt: f.StartsAt,
			ActiveUntil: f.ActiveUntil, GraceUntil: f.GraceUntil}, o.Now)
	}
	return rows, nil
}

// Payments returns a page of the customer's payments, newest first, at
// most PaymentsPerPage (or limit when smaller).
func Payments(ctx context.Context, q store.Querier, o Open, p page.Params) (page.Result[payments.Payment], error) {
	return payments.ListForCustomer(ctx, q, o.Scope(), o.CustomerID, p)
}

// Payment returns the customer's payment with id; anything else is
// resource_not_found.
func (o Open) Payment(ctx context.Context, q store.Querier, paymentID string) (payments.Payment, error) {
	p, err := payments.Get(ctx, q, o.Scope(), paymentID)
	if err == nil && (p.CustomerID == nil || *p.CustomerID != o.CustomerID) {
		err = apperr.New(apperr.ResourceNotFound, "no payment %q", apperr.Clip(paymentID))
	}
	return p, err
}

// MaxMeters bounds the meters the usage page charts.
const MaxMeters = 10

// Meters returns the meters the customer has used in the last 35 days or
// is billed by on a live subscription, by id, at most MaxMeters.
func Meters(ctx context.Context, q store.Querier, o Open) ([]string, error) {
	ids := []string{}
	err := q.SelectContext(ctx, &ids, `SELECT meter_id FROM (
			SELECT meter_id FROM subscriptions WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3
				AND status IN ('trialing', 'active', 'past_due') AND meter_id IS NOT NULL
			UNION
			SELECT DISTINCT meter_id FROM usage_buckets WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3
				AND start_at >= $4) m
		ORDER BY meter_id LIMIT $5`, o.MerchantID, o.Mode, o.CustomerID, o.Now.Add(-35*24*time.Hour), MaxMeters)
	return ids, store.Translate(err)
}

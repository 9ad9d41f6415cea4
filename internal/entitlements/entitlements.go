// Package entitlements grants features to customers and answers the access
// check merchants call on their request path.
//
// A grant is recorded in the history (entitlement_grants, ent_ ids) and
// becomes the customer's one current entitlement to the feature, replacing
// the previous limit and active_until. For a metered feature, usage is the
// backing meter's aggregation over the customer's events since the grant
// started, read from a usage window (package metering) that ingestion keeps
// up to date, so a check is a handful of primary-key lookups in one query
// however many events the customer has.
package entitlements

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// EventGranted is the event type a grant emits.
const EventGranted = "entitlement.granted"

// Sources of a grant.
const (
	SourceAPI  = "api"
	SourcePlan = "plan"
)

// GrantInput is a grant request.
type GrantInput struct {
	FeatureKey string
	Customer   customers.Ref
	// Limit is the usage limit of a metered feature; nil means unlimited.
	Limit       *int64
	ActiveUntil *time.Time
	// StartsAt is when the grant takes effect and its usage starts to
	// count; nil means now. Not on the REST API: subscriptions set it.
	StartsAt *time.Time
	// Source is who granted it; empty means SourceAPI.
	Source string
}

// Grant is one recorded grant.
type Grant struct {
	MerchantID  string      `db:"merchant_id"`
	Mode        tenant.Mode `db:"mode"`
	ID          string      `db:"id"`
	CustomerID  string      `db:"customer_id"`
	FeatureID   string      `db:"feature_id"`
	FeatureKey  string      `db:"feature_key"`
	Limit       *int64      `db:"limit_value"`
	StartsAt    time.Time   `db:"starts_at"`
	ActiveUntil *time.Time  `db:"active_until"`
	Source      string      `db:"source"`
	RevokedAt   *time.Time  `db:"revoked_at"`
	CreatedAt   time.Time   `db:"created_at"`
}

// Validate applies the rules that need no database; errors are
// invalid_request naming the field.
func (in *GrantInput) Validate(now time.Time) error {
	if in.FeatureKey == "" {
		return apperr.Field("feature_key", "is required")
	}
	if in.Limit != nil && *in.Limit < 0 {
		return apperr.Field("limit_value", "must be a non-negative integer")
	}
	if in.StartsAt == nil {
		in.StartsAt = &now
	}
	start := in.StartsAt.Truncate(time.Microsecond)
	in.StartsAt = &start
	if in.ActiveUntil != nil && !in.ActiveUntil.After(start) {
		return apperr.Field("active_until", "must be after the grant starts (%s)", start.UTC().Format(time.RFC3339))
	}
	switch in.Source {
	case "":
		in.Source = SourceAPI
	case SourceAPI, SourcePlan:
	default:
		return apperr.Field("source", "must be api or plan")
	}
	return nil
}

// grantedEvent is the data of an entitlement.granted event.
type grantedEvent struct {
	Object      string     `json:"object"`
	ID          string     `json:"id"`
	Feature     string     `json:"feature"`
	CustomerID  string     `json:"customer_id"`
	LimitValue  *string    `json:"limit_value"`
	StartsAt    time.Time  `json:"starts_at"`
	ActiveUntil *time.Time `json:"active_until"`
	Livemode    bool       `json:"livemode"`
}

const grantColumns = `merchant_id, mode, id, customer_id, feature_id, limit_value, starts_at, active_until, source, revoked_at, created_at`

// Create grants a feature to a customer: it records the grant, makes it the
// customer's current entitlement to the feature (replacing the previous
// limit and active_until; history is kept), starts its usage window for a
// metered feature, and emits entitlement.granted, all in q, which must be a
// transaction. Fails with unknown_feature (404), customer_required,
// unknown_customer (400) or invalid_request (a limit on a boolean feature).
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in GrantInput, now time.Time) (Grant, error) {
	if err := in.Validate(now); err != nil {
		return Grant{}, err
	}
	f, err := features.ByKey(ctx, q, s, in.FeatureKey)
	if err != nil {
		return Grant{}, err
	}
	if f.Type != features.Metered && in.Limit != nil {
		return Grant{}, apperr.Field("limit_value", "feature %s is boolean; only metered features take a limit", f.Key)
	}
	if in.Customer.Empty() {
		return Grant{}, apperr.New(apperr.CustomerRequired, "customer_id or external_customer_id is required")
	}
	if f.MeterID != nil {
		// Before any row lock (the customer upsert): see metering.LockUsage.
		if err := metering.LockUsage(ctx, q, s); err != nil {
			return Grant{}, err
		}
	}
	c, _, err := customers.Resolve(ctx, q, s, in.Customer, true)
	if err != nil {
		return Grant{}, err
	}
	var g Grant
	err = q.GetContext(ctx, &g, `INSERT INTO entitlement_grants (merchant_id, mode, id, customer_id, feature_id, limit_value, starts_at, active_until, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+grantColumns,
		s.MerchantID, s.Mode, id.New("ent"), c.ID, f.ID, in.Limit, *in.StartsAt, in.ActiveUntil, in.Source)
	if err != nil {
		return Grant{}, store.Translate(err)
	}
	g.FeatureKey = f.Key
	_, err = q.ExecContext(ctx, `INSERT INTO entitlements (merchant_id, mode, customer_id, feature_id, grant_id, limit_value, starts_at, active_until)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (merchant_id, mode, customer_id, feature_id) DO UPDATE SET grant_id = EXCLUDED.grant_id,
			limit_value = EXCLUDED.limit_value, starts_at = EXCLUDED.starts_at, active_until = EXCLUDED.active_until,
			grace_until = NULL, revoked_at = NULL, updated_at = now()`,
		s.MerchantID, s.Mode, c.ID, f.ID, g.ID, g.Limit, g.StartsAt, g.ActiveUntil)
	if err != nil {
		return Grant{}, store.Translate(err)
	}
	if f.MeterID != nil {
		if err := metering.TrackWindow(ctx, q, s, c.ID, *f.MeterID, f.ID, g.StartsAt); err != nil {
			return Grant{}, err
		}
	}
	ev := grantedEvent{Object: "entitlement_grant", ID: g.ID, Feature: f.Key, CustomerID: c.ID,
		StartsAt: g.StartsAt.UTC(), ActiveUntil: g.ActiveUntil, Livemode: s.Livemode()}
	if g.Limit != nil {
		l := formatInt(*g.Limit)
		ev.LimitValue = &l
	}
	if _, err := events.Emit(ctx, q, s, EventGranted, ev); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// Revoke marks the grant with grantID revoked (an operator's action, across
// merchants) and, when it is the current grant, makes checks answer
// revoked until a new grant. Revoking twice is harmless. Fails with
// resource_not_found when there is no such grant.
func Revoke(ctx context.Context, q store.Querier, grantID string, now time.Time) (Grant, error) {
	var gs []Grant
	err := q.SelectContext(ctx, &gs, `UPDATE entitlement_grants SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING `+grantColumns, grantID, now)
	if err != nil {
		return Grant{}, store.Translate(err)
	}
	if len(gs) == 0 {
		return Grant{}, apperr.New(apperr.ResourceNotFound, "no entitlement grant %q", grantID)
	}
	g := gs[0]
	_, err = q.ExecContext(ctx, `UPDATE entitlements SET revoked_at = $6, updated_at = now()
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND feature_id = $4 AND grant_id = $5`,
		g.MerchantID, g.Mode, g.CustomerID, g.FeatureID, g.ID, *g.RevokedAt)
	if err != nil {
		return Grant{}, store.Translate(err)
	}
	err = q.GetContext(ctx, &g.FeatureKey, `SELECT key FROM features WHERE merchant_id = $1 AND id = $2`, g.MerchantID, g.FeatureID)
	return g, store.Translate(err)
}

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
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

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
	// SubscriptionID is the subscription a plan grant follows (SourcePlan).
	SubscriptionID *string
}

// GrantRecord is one recorded grant.
type GrantRecord struct {
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

// Decode reads POST /v1/entitlement_grants' schema from a JSON object (a
// REST body or tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (GrantInput, error) {
	in := GrantInput{
		FeatureKey:  o.RequiredString("feature_key", 0, 0),
		Customer:    customers.DecodeRef(o),
		ActiveUntil: o.Time("active_until"),
	}
	if a, ok := o.Amount("limit_value"); ok {
		l := int64(a)
		in.Limit = &l
	}
	return in, o.Err()
}

// CheckInput is what an access check names: the path of GET
// /v1/customers/{id}/entitlements/{feature_key}, and the check_entitlement
// tool's arguments.
type CheckInput struct {
	CustomerID string
	FeatureKey string
}

// DecodeCheck reads a check's customer_id and feature_key from a JSON
// object (tool arguments); errors are invalid_request naming the field.
func DecodeCheck(o *fields.Object) (CheckInput, error) {
	in := CheckInput{
		CustomerID: o.RequiredString("customer_id", 0, 0),
		FeatureKey: o.RequiredString("feature_key", 0, 0),
	}
	return in, o.Err()
}

// Wire returns the grant's public form.
func (g GrantRecord) Wire() wire.EntitlementGrant {
	j := wire.EntitlementGrant{
		Object: "entitlement_grant", ID: g.ID, Feature: g.FeatureKey, CustomerID: g.CustomerID,
		StartsAt: wire.Timestamp(g.StartsAt), ActiveUntil: wire.OptTimestamp(g.ActiveUntil), CreatedAt: wire.Timestamp(g.CreatedAt),
		Livemode: g.Mode == tenant.Live,
	}
	if g.Limit != nil {
		l := formatInt(*g.Limit)
		j.LimitValue = &l
	}
	return j
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
	// An active_until already past is accepted and checks as expired at
	// once; only a start the caller chose must
	// precede it.
	if in.StartsAt != nil && in.ActiveUntil != nil && !in.ActiveUntil.After(*in.StartsAt) {
		return apperr.Field("active_until", "must be after the grant starts (%s)", in.StartsAt.UTC().Format(time.RFC3339))
	}
	if in.StartsAt == nil {
		in.StartsAt = &now
	}
	start := in.StartsAt.Truncate(time.Microsecond)
	in.StartsAt = &start
	switch in.Source {
	case "":
		in.Source = SourceAPI
	case SourceAPI, SourcePlan:
	default:
		return apperr.Field("source", "must be api or plan")
	}
	return nil
}

const grantColumns = `merchant_id, mode, id, customer_id, feature_id, limit_value, starts_at, active_until, source, revoked_at, created_at`

// Grant is GrantTx in a transaction of its own.
func Grant(ctx context.Context, db *store.DB, s tenant.Scope, in GrantInput, now time.Time) (GrantRecord, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (GrantRecord, error) { return GrantTx(ctx, tx, s, in, now) })
}

// GrantTx grants a feature to a customer at now: it records the grant,
// makes it the customer's current entitlement to the feature (replacing the
// previous limit and active_until; history is kept), starts its usage
// window for a metered feature, and emits entitlement.granted, all in tx.
// Fails with unknown_feature (404), customer_required, unknown_customer
// (400) or invalid_request (a limit on a boolean feature).
func GrantTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in GrantInput, now time.Time) (GrantRecord, error) {
	q := tx
	if err := in.Validate(now); err != nil {
		return GrantRecord{}, err
	}
	f, err := features.ByKey(ctx, q, s, in.FeatureKey)
	if err != nil {
		return GrantRecord{}, err
	}
	if f.Type != features.Metered && in.Limit != nil {
		return GrantRecord{}, apperr.Field("limit_value", "feature %s is boolean; only metered features take a limit", f.Key)
	}
	if in.Customer.Empty() {
		return GrantRecord{}, apperr.New(apperr.CustomerRequired, "customer_id or external_customer_id is required")
	}
	if f.MeterID != nil {
		// Before any row lock (the customer upsert): see metering.LockUsage.
		if err := metering.LockUsage(ctx, q, s); err != nil {
			return GrantRecord{}, err
		}
	}
	c, _, err := customers.Resolve(ctx, q, s, in.Customer, true, now)
	if err != nil {
		return GrantRecord{}, err
	}
	var g GrantRecord
	err = q.GetContext(ctx, &g, `INSERT INTO entitlement_grants (merchant_id, mode, id, customer_id, feature_id, limit_value, starts_at, active_until, source, created_at, subscription_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+grantColumns,
		s.MerchantID, s.Mode, id.New("ent"), c.ID, f.ID, in.Limit, *in.StartsAt, in.ActiveUntil, in.Source, now, in.SubscriptionID)
	if err != nil {
		return GrantRecord{}, store.Translate(err)
	}
	g.FeatureKey = f.Key
	_, err = q.ExecContext(ctx, `INSERT INTO entitlements (merchant_id, mode, customer_id, feature_id, grant_id, limit_value, starts_at, active_until)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (merchant_id, mode, customer_id, feature_id) DO UPDATE SET grant_id = EXCLUDED.grant_id,
			limit_value = EXCLUDED.limit_value, starts_at = EXCLUDED.starts_at, active_until = EXCLUDED.active_until,
			grace_until = NULL, revoked_at = NULL, updated_at = now()`,
		s.MerchantID, s.Mode, c.ID, f.ID, g.ID, g.Limit, g.StartsAt, g.ActiveUntil)
	if err != nil {
		return GrantRecord{}, store.Translate(err)
	}
	if f.MeterID != nil {
		if err := metering.TrackWindow(ctx, q, s, c.ID, *f.MeterID, f.ID, g.StartsAt); err != nil {
			return GrantRecord{}, err
		}
	}
	if _, err := events.Emit(ctx, tx, s, events.EntitlementGranted, now, g.Wire()); err != nil {
		return GrantRecord{}, err
	}
	return g, nil
}

// Revoke marks the grant with grantID revoked at now (an operator's action,
// across merchants) and, when it is the current grant, makes checks answer
// revoked until a new grant, in a transaction of its own. Revoking twice is
// harmless. Fails with resource_not_found when there is no such grant.
func Revoke(ctx context.Context, db *store.DB, grantID string, now time.Time) (GrantRecord, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (GrantRecord, error) { return RevokeTx(ctx, tx, grantID, now) })
}

// GrantScope returns the merchant and mode of the grant with grantID (an
// operator names a grant, not its merchant), or resource_not_found.
func GrantScope(ctx context.Context, q store.Querier, grantID string) (tenant.Scope, error) {
	var rows []struct {
		MerchantID string      `db:"merchant_id"`
		Mode       tenant.Mode `db:"mode"`
	}
	err := q.SelectContext(ctx, &rows, `SELECT merchant_id, mode FROM entitlement_grants WHERE id = $1`, grantID)
	if err == nil && len(rows) == 0 {
		err = apperr.New(apperr.ResourceNotFound, "no entitlement grant %q", grantID)
	}
	if err != nil {
		return tenant.Scope{}, store.Translate(err)
	}
	return tenant.Scope{MerchantID: rows[0].MerchantID, Mode: rows[0].Mode}, nil
}

// RevokeTx is Revoke in the caller's transaction.
func RevokeTx(ctx context.Context, tx *store.Tx, grantID string, now time.Time) (GrantRecord, error) {
	q := tx
	var gs []GrantRecord
	err := q.SelectContext(ctx, &gs, `UPDATE entitlement_grants SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING `+grantColumns, grantID, now)
	if err != nil {
		return GrantRecord{}, store.Translate(err)
	}
	if len(gs) == 0 {
		return GrantRecord{}, apperr.New(apperr.ResourceNotFound, "no entitlement grant %q", grantID)
	}
	g := gs[0]
	_, err = q.ExecContext(ctx, `UPDATE entitlements SET revoked_at = $6, updated_at = now()
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND feature_id = $4 AND grant_id = $5`,
		g.MerchantID, g.Mode, g.CustomerID, g.FeatureID, g.ID, *g.RevokedAt)
	if err != nil {
		return GrantRecord{}, store.Translate(err)
	}
	err = q.GetContext(ctx, &g.FeatureKey, `SELECT key FROM features WHERE merchant_id = $1 AND id = $2`, g.MerchantID, g.FeatureID)
	return g, store.Translate(err)
}

// Subscription states as entitlements see them (a plan's
// features are active while its subscription is active, in grace while it
// is past due, revoked after it is revoked or canceled, expired after it
// expired).
const (
	FollowActive  = "active"
	FollowGrace   = "grace"
	FollowRevoked = "revoked"
	FollowExpired = "expired"
)

// FollowSubscription makes the current entitlements granted by the
// subscription reflect its state at `at`: active clears any lapse; grace
// keeps them entitled until graceUntil; revoked revokes them; expired ends
// them at `at`. Entitlements since replaced by another grant are left alone.
func FollowSubscription(ctx context.Context, q store.Querier, s tenant.Scope, subscriptionID, state string, at, graceUntil time.Time) error {
	args := []any{s.MerchantID, s.Mode, subscriptionID}
	var set string
	switch state {
	case FollowActive:
		set = `active_until = NULL, grace_until = NULL, revoked_at = NULL`
	case FollowGrace:
		set, args = `active_until = $4, grace_until = $5, revoked_at = NULL`, append(args, at, graceUntil)
	case FollowRevoked:
		set, args = `revoked_at = $4`, append(args, at)
	case FollowExpired:
		set, args = `active_until = $4, grace_until = NULL, revoked_at = NULL`, append(args, at)
	default:
		return apperr.New(apperr.Internal, "unknown subscription state %q", state)
	}
	_, err := q.ExecContext(ctx, `UPDATE entitlements e SET `+set+`, updated_at = now()
		FROM entitlement_grants g
		WHERE g.merchant_id = $1 AND g.mode = $2 AND g.subscription_id = $3 AND g.revoked_at IS NULL
			AND e.merchant_id = g.merchant_id AND e.grant_id = g.id`,
		args...)
	return store.Translate(err)
}

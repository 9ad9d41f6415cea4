package entitlements

import (
	"context"
	"math/big"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Check reasons, as the entitlement check answers them.
const (
	Active        = "active"
	Grace         = "grace"
	NoGrant       = "no_grant"
	NotStarted    = "not_started"
	Revoked       = "revoked"
	Expired       = "expired"
	LimitExceeded = "limit_exceeded"
)

// Result is the answer to an access check.
type Result struct {
	Mode       tenant.Mode
	CustomerID string
	FeatureKey string
	Entitled   bool
	Reason     string
	// Metered is true for a metered feature: Used is set, and Limit and
	// Remaining are when the grant has a limit. A boolean feature has none.
	Metered   bool
	Limit     *string
	Used      string
	Remaining *string
}

// State is what a check evaluates: the current entitlement, if any, and the
// usage counted against it. Subscriptions set StartsAt in the future
// (not_started) and GraceUntil past ActiveUntil (grace).
type State struct {
	Granted     bool
	RevokedAt   *time.Time
	StartsAt    time.Time
	ActiveUntil *time.Time
	GraceUntil  *time.Time
	Limit       *string // decimal, metered only
	Used        string  // decimal, metered only
}

// Evaluate decides entitlement at now, in order: no grant, revoked, not yet
// started, past active_until (grace while before grace_until, else expired),
// usage at or over the limit, else active.
func Evaluate(st State, now time.Time) (entitled bool, reason string) {
	switch {
	case !st.Granted:
		return false, NoGrant
	case st.RevokedAt != nil:
		return false, Revoked
	case now.Before(st.StartsAt):
		return false, NotStarted
	case st.ActiveUntil != nil && !now.Before(*st.ActiveUntil):
		if st.GraceUntil != nil && now.Before(*st.GraceUntil) {
			return true, Grace
		}
		return false, Expired
	case st.Limit != nil && cmpDecimal(st.Used, *st.Limit) >= 0:
		return false, LimitExceeded
	}
	return true, Active
}

const checkSQL = `
SELECT c.id AS customer_id, f.id AS feature_id, f.type, m.aggregation,
	e.grant_id, e.limit_value::text AS limit_value, e.starts_at, e.active_until, e.grace_until, e.revoked_at,
	w.event_count, w.value_sum::text AS value_sum, w.value_max, w.last_value
FROM (SELECT $3::text AS cid, $4::text AS fkey) x
LEFT JOIN customers c ON c.merchant_id = $1 AND c.mode = $2 AND c.id = x.cid
LEFT JOIN features f ON f.merchant_id = $1 AND f.mode = $2 AND f.key = x.fkey
LEFT JOIN meters m ON m.merchant_id = $1 AND m.id = f.meter_id
LEFT JOIN entitlements e ON e.merchant_id = $1 AND e.mode = $2 AND e.customer_id = c.id AND e.feature_id = f.id
LEFT JOIN usage_windows w ON w.merchant_id = $1 AND w.mode = $2 AND w.customer_id = c.id AND w.meter_id = f.meter_id AND w.owner = f.id`

type checkRow struct {
	CustomerID  *string    `db:"customer_id"`
	FeatureID   *string    `db:"feature_id"`
	Type        *string    `db:"type"`
	Aggregation *string    `db:"aggregation"`
	GrantID     *string    `db:"grant_id"`
	Limit       *string    `db:"limit_value"`
	StartsAt    *time.Time `db:"starts_at"`
	ActiveUntil *time.Time `db:"active_until"`
	GraceUntil  *time.Time `db:"grace_until"`
	RevokedAt   *time.Time `db:"revoked_at"`
	Count       *int64     `db:"event_count"`
	Sum         *string    `db:"value_sum"`
	Max         *int64     `db:"value_max"`
	Last        *int64     `db:"last_value"`
}

// Check is Checker.Check on any querier (a transaction, say), unprepared.
func Check(ctx context.Context, q store.Querier, s tenant.Scope, customerID, featureKey string, now time.Time) (Result, error) {
	var r checkRow
	if err := q.GetContext(ctx, &r, checkSQL, s.MerchantID, s.Mode, customerID, featureKey); err != nil {
		return Result{}, store.Translate(err)
	}
	return evaluate(r, s, customerID, featureKey, now)
}

func evaluate(r checkRow, s tenant.Scope, customerID, featureKey string, now time.Time) (Result, error) {
	if r.CustomerID == nil {
		return Result{}, &apperr.Error{Code: apperr.UnknownCustomer, Message: "no customer " + strconv.Quote(apperr.Clip(customerID))}
	}
	if r.FeatureID == nil {
		return Result{}, apperr.New(apperr.UnknownFeature, "no feature %q in this account and mode", featureKey)
	}
	res := Result{Mode: s.Mode, CustomerID: customerID, FeatureKey: featureKey, Metered: *r.Type == features.Metered}
	st := State{Granted: r.GrantID != nil, RevokedAt: r.RevokedAt, ActiveUntil: r.ActiveUntil, GraceUntil: r.GraceUntil}
	if r.StartsAt != nil {
		st.StartsAt = *r.StartsAt
	}
	if res.Metered {
		w := metering.Window{Max: r.Max, Last: r.Last}
		if r.Count != nil {
			w.Count = *r.Count
		}
		if r.Sum != nil {
			w.Sum = *r.Sum
		}
		agg := metering.Sum
		if r.Aggregation != nil {
			agg = *r.Aggregation
		}
		st.Used, st.Limit = w.Used(agg), r.Limit
		res.Used, res.Limit = st.Used, r.Limit
		if r.Limit != nil {
			rem := remaining(*r.Limit, st.Used)
			res.Remaining = &rem
		}
	}
	res.Entitled, res.Reason = Evaluate(st, now)
	return res, nil
}

// Wire returns the check result's public form: a boolean feature has no
// limit, used or remaining.
func (r Result) Wire() wire.Entitlement {
	j := wire.Entitlement{Object: "entitlement", CustomerID: r.CustomerID, Feature: r.FeatureKey, Entitled: r.Entitled,
		Reason: r.Reason, Livemode: r.Mode == tenant.Live}
	if r.Metered {
		used := r.Used
		j.Used, j.Limit, j.Remaining = &used, r.Limit, r.Remaining
	}
	return j
}

// cmpDecimal compares two non-negative decimal strings.
func cmpDecimal(a, b string) int {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	if x == nil || y == nil {
		return 0
	}
	return x.Cmp(y)
}

// remaining is max(0, limit − used) as a decimal string.
func remaining(limit, used string) string {
	l, ok1 := new(big.Int).SetString(limit, 10)
	u, ok2 := new(big.Int).SetString(used, 10)
	if !ok1 || !ok2 {
		return "0"
	}
	d := l.Sub(l, u)
	if d.Sign() < 0 {
		return "0"
	}
	return d.String()
}

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }

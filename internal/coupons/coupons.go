// Package coupons owns coupons: percent or amount off a subscription's
// charges, once, for a number of periods, or forever, with an optional
// code, redemption limit, last redemption time and set of plans. Redeem
// counts a redemption in the caller's transaction (checkout, or applying a
// coupon to a subscription), under the coupon's row lock, so a limit is
// never exceeded however many redemptions race; the subscription keeps
// the coupon's terms as redeemed (package subscriptions applies them).
package coupons

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Durations of a coupon.
const (
	Once      = "once"
	Repeating = "repeating"
	Forever   = "forever"
)

// Statuses of a coupon.
const (
	Active   = "active"
	Archived = "archived"
)

// Coupon is a stored coupon.
type Coupon struct {
	MerchantID        string         `db:"merchant_id"`
	Mode              tenant.Mode    `db:"mode"`
	ID                string         `db:"id"`
	Seq               int64          `db:"seq"`
	Name              *string        `db:"name"`
	Code              *string        `db:"code"`
	PercentOff        *int64         `db:"percent_off"`
	AmountOff         *money.Amount  `db:"amount_off"`
	Duration          string         `db:"duration"`
	DurationInPeriods *int64         `db:"duration_in_periods"`
	MaxRedemptions    *int64         `db:"max_redemptions"`
	RedeemBy          *time.Time     `db:"redeem_by"`
	AppliesTo         pq.StringArray `db:"applies_to"`
	TimesRedeemed     int64          `db:"times_redeemed"`
	Status            string         `db:"status"`
	CreatedAt         time.Time      `db:"created_at"`
	ArchivedAt        *time.Time     `db:"archived_at"`
}

const columns = `merchant_id, mode, id, seq, name, code, percent_off, amount_off, duration, duration_in_periods, max_redemptions,
	redeem_by, applies_to, times_redeemed, status, created_at, archived_at`

// Valid reports whether the coupon can be redeemed at now.
func (c Coupon) Valid(now time.Time) bool { return c.problem(now) == "" }

// problem says why the coupon cannot be redeemed at now ("" when it can).
func (c Coupon) problem(now time.Time) string {
	switch {
	case c.Status != Active:
		return "is archived"
	case c.RedeemBy != nil && !now.Before(*c.RedeemBy):
		return "expired at " + c.RedeemBy.UTC().Format(time.RFC3339)
	case c.MaxRedemptions != nil && c.TimesRedeemed >= *c.MaxRedemptions:
		return "has been redeemed its maximum of " + strconv.FormatInt(*c.MaxRedemptions, 10) + " times"
	}
	return ""
}

// AppliesToPlan reports whether the coupon may discount a subscription to
// planID.
func (c Coupon) AppliesToPlan(planID string) bool {
	return len(c.AppliesTo) == 0 || slices.Contains(c.AppliesTo, planID)
}

// Wire returns the coupon's public form; valid is judged at now.
func (c Coupon) Wire(now time.Time) wire.Coupon {
	w := wire.Coupon{Object: "coupon", ID: c.ID, Name: c.Name, Code: c.Code, PercentOff: c.PercentOff, Duration: c.Duration,
		DurationInPeriods: c.DurationInPeriods, MaxRedemptions: c.MaxRedemptions, RedeemBy: wire.OptTimestamp(c.RedeemBy),
		AppliesTo: c.AppliesTo, TimesRedeemed: c.TimesRedeemed, Valid: c.Valid(now), Status: c.Status,
		CreatedAt: wire.Timestamp(c.CreatedAt), ArchivedAt: wire.OptTimestamp(c.ArchivedAt), Livemode: c.Mode == tenant.Live}
	if c.AmountOff != nil {
		a := c.AmountOff.String()
		w.AmountOff = &a
	}
	if w.AppliesTo == nil {
		w.AppliesTo = []string{}
	}
	return w
}

// Position is the coupon's place in the list, for cursors.
func (c Coupon) Position() page.Cursor { return page.Cursor{At: c.CreatedAt, Seq: c.Seq} }

// List returns a page of the scope's coupons, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Coupon], error) {
	return page.Select(ctx, q, "coupons", columns, s, p, Coupon.Position)
}

// Archive stops the scope's coupon couponID from being redeemed again (at
// now); discounts already applied keep running. Archiving again answers
// the same. Unknown is 404 resource_not_found.
func Archive(ctx context.Context, q store.Querier, s tenant.Scope, couponID string, now time.Time) (Coupon, error) {
	if p := fields.TextProblem(couponID); p != "" {
		return Coupon{}, apperr.Field("id", "%s", p)
	}
	var cs []Coupon
	err := q.SelectContext(ctx, &cs, `UPDATE coupons SET status = 'archived', archived_at = coalesce(archived_at, $4)
		WHERE merchant_id = $1 AND mode = $2 AND id = $3 RETURNING `+columns, s.MerchantID, s.Mode, couponID, now)
	if err != nil {
		return Coupon{}, store.Translate(err)
	}
	if len(cs) == 0 {
		return Coupon{}, &apperr.Error{Code: apperr.ResourceNotFound, Status: 404, Message: "no coupon " + strconv.Quote(apperr.Clip(couponID))}
	}
	return cs[0], nil
}

package coupons

import (
	"context"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Redeem counts one redemption, in tx at now, of the scope's coupon named
// ref (its id, or its code in any letter case) for a subscription to
// planID, and returns the coupon as redeemed. The count is raised by one
// statement that also checks the coupon is redeemable: concurrent
// redemptions wait on the row's lock and each checks the count the one
// before left, so max_redemptions is never exceeded. An unknown, archived,
// expired, exhausted or inapplicable coupon is 400 invalid_coupon.
func Redeem(ctx context.Context, tx *store.Tx, s tenant.Scope, ref, planID string, now time.Time) (Coupon, error) {
	if fields.TextProblem(ref) != "" || ref == "" || len(ref) > 255 {
		return Coupon{}, apperr.New(apperr.InvalidCoupon, "coupon: no such coupon")
	}
	var cs []Coupon
	err := tx.SelectContext(ctx, &cs, `UPDATE coupons SET times_redeemed = times_redeemed + 1
		WHERE merchant_id = $1 AND mode = $2 AND id = (`+findID+`) AND status = 'active'
			AND (max_redemptions IS NULL OR times_redeemed < max_redemptions) AND (redeem_by IS NULL OR redeem_by > $4)
			AND (applies_to IS NULL OR $5 = ANY(applies_to))
		RETURNING `+columns, s.MerchantID, s.Mode, ref, now, planID)
	if err != nil {
		return Coupon{}, store.Translate(err)
	}
	if len(cs) == 1 {
		return cs[0], nil
	}
	return Coupon{}, whyNot(ctx, tx, s, ref, planID, now)
}

// Lookup returns the scope's coupon named ref (id or code, any case) when
// it could be redeemed for planID at now, without redeeming it (the
// checkout page shows the discount before the payer pays); otherwise
// invalid_coupon saying why.
func Lookup(ctx context.Context, q store.Querier, s tenant.Scope, ref, planID string, now time.Time) (Coupon, error) {
	c, ok, err := find(ctx, q, s, ref)
	switch {
	case err != nil:
		return Coupon{}, err
	case !ok:
		return Coupon{}, apperr.New(apperr.InvalidCoupon, "coupon: no coupon %s", strconv.Quote(apperr.Clip(ref)))
	}
	if p := c.problem(now); p != "" {
		return Coupon{}, apperr.New(apperr.InvalidCoupon, "coupon: %s %s", strconv.Quote(apperr.Clip(ref)), p)
	}
	if !c.AppliesToPlan(planID) {
		return Coupon{}, apperr.New(apperr.InvalidCoupon, "coupon: %s does not apply to plan %s", strconv.Quote(apperr.Clip(ref)), planID)
	}
	return c, nil
}

// whyNot is the invalid_coupon error saying why ref could not be redeemed.
func whyNot(ctx context.Context, q store.Querier, s tenant.Scope, ref, planID string, now time.Time) error {
	if _, err := Lookup(ctx, q, s, ref, planID, now); err != nil {
		return err
	}
	// Redeemable when looked at again: it was exhausted, then not, which
	// cannot happen; say so plainly rather than pretend it worked.
	return apperr.New(apperr.InvalidCoupon, "coupon: %s cannot be redeemed now", strconv.Quote(apperr.Clip(ref)))
}

// findID selects the id of the coupon of merchant $1 and mode $2 named $3:
// the one with that id, else the one with that code in any letter case (a
// code may look like another coupon's id; the id wins).
const findID = `SELECT id FROM coupons WHERE merchant_id = $1 AND mode = $2 AND (id = $3 OR lower(code) = lower($3))
	ORDER BY id = $3 DESC LIMIT 1`

// find returns the scope's coupon whose id is ref, else whose code is ref
// in any letter case.
func find(ctx context.Context, q store.Querier, s tenant.Scope, ref string) (Coupon, bool, error) {
	if fields.TextProblem(ref) != "" || ref == "" || len(ref) > 255 {
		return Coupon{}, false, nil
	}
	var cs []Coupon
	err := q.SelectContext(ctx, &cs, `SELECT `+columns+` FROM coupons WHERE merchant_id = $1 AND mode = $2 AND id = (`+findID+`)`,
		s.MerchantID, s.Mode, ref)
	if err != nil || len(cs) == 0 {
		return Coupon{}, false, store.Translate(err)
	}
	return cs[0], true, nil
}

// Get returns the scope's coupon with id couponID as it is now, whatever
// its state; ok=false when there is none.
func Get(ctx context.Context, q store.Querier, s tenant.Scope, couponID string) (Coupon, bool, error) {
	var cs []Coupon
	err := q.SelectContext(ctx, &cs, `SELECT `+columns+` FROM coupons WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
		s.MerchantID, s.Mode, couponID)
	if err != nil || len(cs) == 0 {
		return Coupon{}, false, store.Translate(err)
	}
	return cs[0], true, nil
}

// CountRedemption counts, in tx, one redemption of the scope's coupon
// couponID that was checked (Lookup) when the customer used it and has
// been honoured since: a live checkout's, whose discounted first charge
// the chain confirmed. It counts whatever the coupon's state is now
// (archived, expired or exhausted meanwhile): the discount was given. So
// live checkouts confirming together may take a coupon past
// max_redemptions by those in flight at once.
func CountRedemption(ctx context.Context, tx *store.Tx, s tenant.Scope, couponID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE coupons SET times_redeemed = times_redeemed + 1 WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
		s.MerchantID, s.Mode, couponID)
	return store.Translate(err)
}

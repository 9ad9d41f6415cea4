package checkout

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// CouponOffer is what a plan's page says of the coupon in its ?coupon=:
// the coupon, and what the checkout would charge at once with it.
type CouponOffer struct {
	Coupon coupons.Coupon
	Plan   plans.Plan
	// FirstCharge is the licensed plan's first charge with the discount (0
	// for a metered plan, charged at its period's end).
	FirstCharge money.Amount
}

// PreviewCoupon looks up the coupon code (or id) for a checkout of the plan
// with planID by its merchant's clock, redeeming nothing: the page shows
// the discount before the payer pays. An unusable coupon is
// invalid_coupon saying why; an unknown plan resource_not_found.
func (e Env) PreviewCoupon(ctx context.Context, planID, code string) (CouponOffer, error) {
	p, ok, err := plans.Get(ctx, e.DB, planID)
	if err != nil {
		return CouponOffer{}, err
	}
	if !ok {
		return CouponOffer{}, apperr.New(apperr.ResourceNotFound, "no plan %q", planID)
	}
	_, now, err := e.terms(ctx, e.DB, p.Scope(), nil)
	if err != nil {
		return CouponOffer{}, err
	}
	c, err := coupons.Lookup(ctx, e.DB, p.Scope(), code, p.ID, now)
	if err != nil {
		return CouponOffer{}, err
	}
	return CouponOffer{Coupon: c, Plan: p, FirstCharge: subscriptions.FirstCharge(p, &c)}, nil
}

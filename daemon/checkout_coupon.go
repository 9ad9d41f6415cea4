package daemon

import (
	"context"
	"strconv"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/plans"
)

// couponView is the coupon part of a plan page: a form that reloads the
// page with ?coupon=CODE, and what that coupon does, or why it cannot be
// used. Code is carried into the pay forms (test mode) or the wallet's
// submission (live mode) only when it applies.
type couponView struct {
	PageURL string
	Code    string
	Applied string
	Error   string
}

// maxCouponCode bounds the code a page echoes: a longer one is no code.
const maxCouponCode = 40

// couponSection adds the coupon form to a plan page that can be paid (with
// test wallets, or in live mode from a wallet; not a plan change's page),
// with the offer of the coupon in ?coupon= when there is one.
func (s *Server) couponSection(ctx context.Context, id, code string, v *checkoutView) error {
	live := v.Live != nil && v.Live.Kind == "plan" && !v.Live.Change && v.Live.Unavailable == "" && !v.Live.Pending
	if v.Kind != "plan" || len(v.Wallets) == 0 && !live {
		return nil
	}
	cv := &couponView{PageURL: s.pagePath(id)}
	v.Coupon = cv
	if code == "" {
		return nil
	}
	if len(code) > maxCouponCode || fields.TextProblem(code) != "" {
		cv.Error = "This coupon code is not valid."
		return nil
	}
	cv.Code = code
	offer, err := s.money.checkout.PreviewCoupon(ctx, id, code)
	switch apperr.CodeOf(err) {
	case "":
		cv.Applied = couponText(offer)
		if live {
			v.Live.Coupon = code
		}
		return nil
	case apperr.InvalidCoupon:
		cv.Error = "This coupon cannot be used: it is unknown, expired, used up, or not for this plan."
		return nil
	}
	return err
}

// couponText says what the coupon does to this plan's charges.
func couponText(o checkout.CouponOffer) string {
	c := o.Coupon
	name := c.ID
	if c.Code != nil {
		name = *c.Code
	}
	off := ""
	if c.PercentOff != nil {
		off = strconv.FormatInt(*c.PercentOff, 10) + "% off"
	} else {
		off = usdc(*c.AmountOff) + " off"
	}
	switch c.Duration {
	case coupons.Once:
		off += " the first charge"
	case coupons.Repeating:
		off += " the charges of the first " + strconv.FormatInt(*c.DurationInPeriods, 10) + " periods"
	default:
		off += " every charge"
	}
	text := "Coupon " + name + " applied: " + off + "."
	if o.Plan.UsageType != plans.Metered && o.Plan.TrialDays == nil {
		text += " You pay " + usdc(o.FirstCharge) + " today."
	}
	return text
}

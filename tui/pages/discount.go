package pages

import (
	"strconv"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
)

// discountOff is what a subscription's discount takes off each charge it
// covers, "−20%" or "−5.00 USDC"; "" without a discount.
func discountOff(d *client.Discount) string {
	switch {
	case d == nil:
		return ""
	case d.Coupon.PercentOff != nil:
		return "−" + strconv.Itoa(*d.Coupon.PercentOff) + "%"
	default:
		return "−" + common.USDC(common.Deref(d.Coupon.AmountOff))
	}
}

package wire

// Coupon is a discount a merchant offers: percent or amount off the charges
// of a subscription, once, for a number of periods, or forever.
type Coupon struct {
	Object            string   `json:"object"` // "coupon"
	ID                string   `json:"id"`
	Name              *string  `json:"name"`
	Code              *string  `json:"code"`
	PercentOff        *int64   `json:"percent_off"`
	AmountOff         *string  `json:"amount_off"`
	Duration          string   `json:"duration"`
	DurationInPeriods *int64   `json:"duration_in_periods"`
	MaxRedemptions    *int64   `json:"max_redemptions"`
	RedeemBy          *string  `json:"redeem_by"`
	AppliesTo         []string `json:"applies_to"` // empty: every plan
	TimesRedeemed     int64    `json:"times_redeemed"`
	// Valid is whether the coupon can be redeemed now: active, not past
	// redeem_by, not exhausted.
	Valid      bool    `json:"valid"`
	Status     string  `json:"status"`
	CreatedAt  string  `json:"created_at"`
	ArchivedAt *string `json:"archived_at"`
	Livemode   bool    `json:"livemode"`
}

// Discount is a coupon applied to a subscription: the coupon as it was
// redeemed, when it was, and the end of the last period it covers (null
// for forever).
type Discount struct {
	Coupon Coupon  `json:"coupon"`
	Start  string  `json:"start"`
	End    *string `json:"end"`
}

// CouponRequest is POST /v1/coupons and the create_coupon tool.
type CouponRequest struct {
	PercentOff        *int64   `json:"percent_off,omitempty" doc:"Percent off each covered charge, 1 to 100 (rounded half up to the base unit). Exactly one of percent_off and amount_off." schema:"minimum=1,maximum=100"`
	AmountOff         *Amount  `json:"amount_off,omitempty" doc:"USDC base units off each covered charge (a charge never goes below zero), as a JSON integer or a string of digits. Exactly one of percent_off and amount_off."`
	Duration          string   `json:"duration" doc:"once (the first charge after redemption), repeating (duration_in_periods periods) or forever." schema:"enum=once|repeating|forever"`
	DurationInPeriods *int64   `json:"duration_in_periods,omitempty" doc:"repeating only, required: how many billing periods the discount covers, 1 to 120." schema:"minimum=1,maximum=120"`
	Code              *string  `json:"code,omitempty" doc:"A code customers type at checkout: 3 to 40 letters, digits, - or _; unique among your coupons whatever the letter case." schema:"minLength=3,maxLength=40,pattern=^[A-Za-z0-9_-]+$"`
	MaxRedemptions    *int64   `json:"max_redemptions,omitempty" doc:"How many times the coupon can be redeemed, 1 to 1000000000; without it, without limit." schema:"minimum=1,maximum=1000000000"`
	RedeemBy          *Time    `json:"redeem_by,omitempty" doc:"The last moment the coupon can be redeemed (ISO-8601 date-time, in the future). Discounts already applied keep running."`
	AppliesTo         []string `json:"applies_to,omitempty" doc:"Plan ids (price_…) the coupon is limited to, 1 to 100; without it, every plan." schema:"minItems=1,maxItems=100"`
	Name              *string  `json:"name,omitempty" doc:"A name shown to customers at checkout and in your records." schema:"maxLength=200"`
}

// DiscountRequest is POST /v1/subscriptions/{id}/discount.
type DiscountRequest struct {
	Coupon *string `json:"coupon" doc:"The coupon to apply: its id (coupon_…) or its code, any letter case; null removes the subscription's discount."`
}

package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// Coupon is percent or amount off a subscription's charges.
type Coupon struct {
	Object            string     `json:"object"` // "coupon"
	ID                string     `json:"id"`     // coupon_…
	Name              *string    `json:"name"`
	Code              *string    `json:"code"`
	PercentOff        *int       `json:"percent_off"` // 1 to 100, or nil with AmountOff
	AmountOff         *string    `json:"amount_off"`  // base units, or nil with PercentOff
	Duration          string     `json:"duration"`    // once, repeating or forever
	DurationInPeriods *int       `json:"duration_in_periods"`
	MaxRedemptions    *int64     `json:"max_redemptions"`
	RedeemBy          *time.Time `json:"redeem_by"`
	AppliesTo         []string   `json:"applies_to"` // plan ids; empty: every plan
	TimesRedeemed     int64      `json:"times_redeemed"`
	Valid             bool       `json:"valid"`  // redeemable now
	Status            string     `json:"status"` // active or archived
	CreatedAt         time.Time  `json:"created_at"`
	ArchivedAt        *time.Time `json:"archived_at"`
	Livemode          bool       `json:"livemode"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *Coupon) setRaw(b json.RawMessage) { v.Raw = b }

// Discount is a coupon applied to a subscription: the coupon as redeemed,
// when, and the end of the last period it covers (nil: forever).
type Discount struct {
	Coupon Coupon     `json:"coupon"`
	Start  time.Time  `json:"start"`
	End    *time.Time `json:"end"`
}

// CouponParams is the body of POST /v1/coupons: exactly one of PercentOff
// and AmountOff. Empty optional fields are not sent.
type CouponParams struct {
	PercentOff        int       `json:"percent_off,omitempty"`
	AmountOff         string    `json:"amount_off,omitempty"`
	Duration          string    `json:"duration"` // once, repeating or forever
	DurationInPeriods int       `json:"duration_in_periods,omitempty"`
	Code              string    `json:"code,omitempty"`
	MaxRedemptions    int64     `json:"max_redemptions,omitempty"`
	RedeemBy          time.Time `json:"-"`
	AppliesTo         []string  `json:"applies_to,omitempty"`
	Name              string    `json:"name,omitempty"`
}

// MarshalJSON sends RedeemBy only when set.
func (p CouponParams) MarshalJSON() ([]byte, error) {
	type plain CouponParams
	out := struct {
		plain
		RedeemBy *time.Time `json:"redeem_by,omitempty"`
	}{plain: plain(p)}
	if !p.RedeemBy.IsZero() {
		out.RedeemBy = &p.RedeemBy
	}
	return json.Marshal(out)
}

// CreateCoupon creates a coupon (POST /v1/coupons). It fails with an
// *Error of code invalid_request or mode_mismatch.
func (c *Client) CreateCoupon(ctx context.Context, p CouponParams, opts ...CallOption) (*Coupon, error) {
	return create[Coupon](ctx, c, "/v1/coupons", p, false, opts)
}

// ListCoupons returns a page of coupons, newest first (GET /v1/coupons).
func (c *Client) ListCoupons(ctx context.Context, p ListParams, opts ...CallOption) (*List[Coupon], error) {
	return list[Coupon](ctx, c, "/v1/coupons", p, opts)
}

// ArchiveCoupon stops a coupon from being redeemed (POST
// /v1/coupons/{id}/archive); discounts already applied keep running. It
// fails with an *Error of code resource_not_found (404).
func (c *Client) ArchiveCoupon(ctx context.Context, id string, opts ...CallOption) (*Coupon, error) {
	return create[Coupon](ctx, c, "/v1/coupons/"+url.PathEscape(id)+"/archive", nil, true, opts)
}

// SetSubscriptionDiscount applies a coupon (its id or code) to a
// subscription from its next charge on, or removes its discount when
// coupon is "" (POST /v1/subscriptions/{id}/discount). It fails with an
// *Error of code invalid_coupon (400), invalid_request or
// resource_not_found.
func (c *Client) SetSubscriptionDiscount(ctx context.Context, id, coupon string, opts ...CallOption) (*Subscription, error) {
	body := map[string]*string{"coupon": nil}
	if coupon != "" {
		body["coupon"] = &coupon
	}
	return create[Subscription](ctx, c, "/v1/subscriptions/"+url.PathEscape(id)+"/discount", body, false, opts)
}

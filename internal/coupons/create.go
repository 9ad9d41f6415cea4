package coupons

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Limits of a coupon's fields.
const (
	MaxNameLen        = 200
	MinCodeLen        = 3
	MaxCodeLen        = 40
	MaxPeriods        = 120
	MaxRedemptionsCap = 1_000_000_000
	MaxAppliesTo      = 100
)

// Input is a create request.
type Input struct {
	PercentOff        *int64
	AmountOff         *money.Amount
	Duration          string
	DurationInPeriods *int64
	Code              *string
	MaxRedemptions    *int64
	RedeemBy          *time.Time
	AppliesTo         []string
	Name              *string
}

// Decode reads POST /v1/coupons' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		PercentOff:        o.Int("percent_off", 1, 100),
		Duration:          o.RequiredString("duration", 0, 0),
		DurationInPeriods: o.Int("duration_in_periods", 1, MaxPeriods),
		Code:              o.String("code", 0, 0),
		MaxRedemptions:    o.Int("max_redemptions", 1, MaxRedemptionsCap),
		RedeemBy:          o.Time("redeem_by"),
		Name:              o.String("name", 0, 0),
	}
	if a, ok := o.Amount("amount_off"); ok {
		in.AmountOff = &a
	}
	if raw := o.Raw("applies_to"); raw != nil {
		if err := json.Unmarshal(raw, &in.AppliesTo); err != nil || len(in.AppliesTo) == 0 || len(in.AppliesTo) > MaxAppliesTo {
			o.Fail(apperr.Field("applies_to", "must be an array of 1 to %d plan ids", MaxAppliesTo))
		}
	}
	return in, o.Err()
}

// Validate applies the rules that need neither the database nor the clock.
func (in *Input) Validate() error {
	switch {
	case in.PercentOff == nil && in.AmountOff == nil:
		return apperr.Field("percent_off", "one of percent_off and amount_off is required")
	case in.PercentOff != nil && in.AmountOff != nil:
		return apperr.Field("amount_off", "give percent_off or amount_off, not both")
	case in.AmountOff != nil && *in.AmountOff < 1:
		return apperr.Field("amount_off", "must be at least 1 base unit")
	}
	switch in.Duration {
	case Repeating:
		if in.DurationInPeriods == nil {
			return apperr.Field("duration_in_periods", "is required with duration repeating (1 to %d periods)", MaxPeriods)
		}
	case Once, Forever:
		if in.DurationInPeriods != nil {
			return apperr.Field("duration_in_periods", "applies to duration repeating only")
		}
	default:
		return apperr.Field("duration", "must be one of once, repeating, forever")
	}
	if in.Code != nil {
		if p := CodeProblem(*in.Code); p != "" {
			return apperr.Field("code", "%s", p)
		}
	}
	if in.Name != nil && utf8.RuneCountInString(*in.Name) > MaxNameLen {
		return apperr.Field("name", "must be at most %d characters", MaxNameLen)
	}
	for _, p := range in.AppliesTo {
		if problem := fields.TextProblem(p); problem != "" || p == "" {
			return apperr.Field("applies_to", "each item must be a plan id")
		}
	}
	return nil
}

// CodeProblem says what is wrong with a coupon code ("" when nothing is):
// 3 to 40 ASCII letters, digits, - or _.
func CodeProblem(code string) string {
	if len(code) < MinCodeLen || len(code) > MaxCodeLen {
		return "must be 3 to 40 letters, digits, - or _"
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "must be 3 to 40 letters, digits, - or _"
		}
	}
	return ""
}

// Create stores an active coupon created at now. redeem_by must be after
// now; applies_to must name plans of the scope (else invalid_request
// naming applies_to); a code already used by another of the scope's
// coupons, in any letter case, is invalid_request naming code.
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time) (Coupon, error) {
	if err := in.Validate(); err != nil {
		return Coupon{}, err
	}
	if in.RedeemBy != nil && !in.RedeemBy.After(now) {
		return Coupon{}, apperr.Field("redeem_by", "must be in the future")
	}
	if len(in.AppliesTo) > 0 {
		var found []string
		err := q.SelectContext(ctx, &found, `SELECT id FROM plans WHERE merchant_id = $1 AND mode = $2 AND id = ANY($3)`,
			s.MerchantID, s.Mode, pq.StringArray(in.AppliesTo))
		if err != nil {
			return Coupon{}, store.Translate(err)
		}
		for _, p := range in.AppliesTo {
			if !slices.Contains(found, p) {
				return Coupon{}, apperr.Field("applies_to", "no plan %s", strconv.Quote(apperr.Clip(p)))
			}
		}
	}
	var applies any
	if len(in.AppliesTo) > 0 {
		applies = pq.StringArray(dedupe(in.AppliesTo))
	}
	var c Coupon
	err := q.GetContext(ctx, &c, `INSERT INTO coupons (merchant_id, mode, id, name, code, percent_off, amount_off, duration,
			duration_in_periods, max_redemptions, redeem_by, applies_to, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("coupon"), in.Name, in.Code, in.PercentOff, in.AmountOff, in.Duration, in.DurationInPeriods,
		in.MaxRedemptions, in.RedeemBy, applies, now.Truncate(time.Microsecond))
	if store.UniqueViolation(err, "coupons_code") {
		return Coupon{}, apperr.Field("code", "%s is already the code of another coupon (codes ignore letter case)", strconv.Quote(*in.Code))
	}
	return c, store.Translate(err)
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

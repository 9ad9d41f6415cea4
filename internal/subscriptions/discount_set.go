package subscriptions

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// DecodeDiscount reads POST /v1/subscriptions/{id}/discount's body: coupon,
// a coupon's id or code, or null to remove the discount (nil).
func DecodeDiscount(o *fields.Object) (*string, error) {
	if !o.Present("coupon") {
		o.Fail(apperr.Field("coupon", "is required: a coupon's id or code, or null to remove the discount"))
	}
	ref := o.String("coupon", 1, 255)
	return ref, o.Err()
}

// SetDiscount applies the scope's coupon ref (id or code) to the scope's
// subscription at now, replacing any discount it has, or removes its
// discount when ref is nil; either change emits subscription.updated. The
// coupon covers the next charge on: a licensed plan's next renewal, a
// metered plan's current period. It fails with resource_not_found, with
// invalid_coupon (see coupons.Redeem) and, for a subscription that has
// ended, invalid_request naming subscription.
func SetDiscount(ctx context.Context, db *store.DB, s tenant.Scope, subscriptionID string, ref *string, now time.Time) (Subscription, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Subscription, error) {
		return SetDiscountTx(ctx, tx, s, subscriptionID, ref, now)
	})
}

// SetDiscountTx is SetDiscount in the caller's transaction.
func SetDiscountTx(ctx context.Context, tx *store.Tx, s tenant.Scope, subscriptionID string, ref *string, now time.Time) (Subscription, error) {
	if p := fields.TextProblem(subscriptionID); p != "" {
		return Subscription{}, apperr.Field("id", "%s", p)
	}
	x, err := lock(ctx, tx, s, subscriptionID)
	if err != nil {
		return Subscription{}, err
	}
	var stored *string
	if ref == nil {
		if x.DiscountJSON == nil {
			return x, nil // nothing to remove: no change, no event
		}
	} else {
		if !x.Live() {
			return Subscription{}, apperr.Field("subscription", "%s is %s: no charge is coming to discount", x.ID, x.Status)
		}
		c, err := coupons.Redeem(ctx, tx, s, *ref, x.PlanID, now)
		if err != nil {
			return Subscription{}, err
		}
		// A licensed plan has paid its current period; a metered one
		// is charged for it at its end; a trial's first period (0 again,
		// anchored on trial_end) is charged when the trial ends.
		first := x.PeriodIndex + 1
		if x.Metered() || x.Status == Trialing {
			first = x.PeriodIndex
		}
		b, err := marshalDiscount(NewDiscount(c, x, first, now))
		if err != nil {
			return Subscription{}, err
		}
		stored = &b
	}
	err = tx.GetContext(ctx, &x, `UPDATE subscriptions SET discount = $3 WHERE merchant_id = $1 AND id = $2 RETURNING `+columns,
		s.MerchantID, x.ID, stored)
	if err != nil {
		return Subscription{}, store.Translate(err)
	}
	_, err = events.Emit(ctx, tx, s, events.SubscriptionUpdated, now, x.Wire())
	return x, err
}

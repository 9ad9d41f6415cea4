package daemon

import (
	"context"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/coupons"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// couponOperations are coupons (create, list, archive) and applying one to
// a subscription.
func couponOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/coupons", class: ratelimit.ClassCreate, status: http.StatusCreated,
			doc: apispec.Operation{ID: "createCoupon", Tag: "Coupons", Summary: "Create a coupon",
				Doc: "percent_off (1 to 100) or amount_off, for once, repeating (duration_in_periods) or forever; optionally a code " +
					"customers type at checkout, max_redemptions, redeem_by and applies_to (plan ids).",
				Body: typeOf[wire.CouponRequest](), Responses: created[wire.Coupon]("The coupon."), Errors: invalidErrs()},
			tool: &toolSpec{name: "create_coupon", title: "Create a coupon",
				doc: "Creates a coupon: exactly one of percent_off (1 to 100) and amount_off (USDC base units) off each charge it covers; " +
					"duration once (the first charge), repeating (duration_in_periods, 1 to 120) or forever. Optional: code (3 to 40 " +
					"letters, digits, - or _; unique whatever the case), max_redemptions, redeem_by, applies_to (plan ids), name. " +
					"Customers redeem it at checkout (?coupon=CODE) or you apply it to a subscription.",
				in: typeOf[wire.CouponRequest](), out: typeOf[wire.Coupon]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := coupons.Decode(c.args)
				if err != nil {
					return nil, err
				}
				now := s.now(c.p)
				x, err := coupons.Create(c.ctx, c.q(s), c.p.Scope, in, now)
				return wireOf(x, err, func(x coupons.Coupon) wire.Coupon { return x.Wire(now) })
			},
		},
		listCouponsOperation(),
		{
			pattern: "POST /v1/coupons/{id}/archive", class: ratelimit.ClassCreate, body: bodyNone,
			doc: apispec.Operation{ID: "archiveCoupon", Tag: "Coupons", Summary: "Archive a coupon",
				Doc:    "No body. The coupon can no longer be redeemed; discounts already applied keep running. Archiving again answers the same.",
				Params: idPath("coupon"), Responses: ok[wire.Coupon]("The archived coupon."),
				Errors: errs(apperr.InvalidRequest, apperr.ResourceNotFound)},
			run: func(s *Server, c *call) (any, error) {
				now := s.now(c.p)
				x, err := coupons.Archive(c.ctx, c.q(s), c.p.Scope, c.path("id"), now)
				return wireOf(x, err, func(x coupons.Coupon) wire.Coupon { return x.Wire(now) })
			},
		},
		{
			pattern: "POST /v1/subscriptions/{id}/discount", class: ratelimit.ClassCreate,
			doc: apispec.Operation{ID: "setSubscriptionDiscount", Tag: "Subscriptions", Summary: "Apply or remove a discount",
				Doc: "coupon: a coupon's id or code applies it from the next charge on (a licensed plan's next renewal, a metered plan's " +
					"current period), replacing any discount; null removes the discount. Emits subscription.updated.",
				Params: idPath("subscription"), Body: typeOf[wire.DiscountRequest](),
				Responses: ok[wire.Subscription]("The subscription after the change."),
				Errors:    append(invalidErrs(), errs(apperr.InvalidCoupon, apperr.ResourceNotFound)...)},
			run: func(s *Server, c *call) (any, error) {
				ref, err := subscriptions.DecodeDiscount(c.args)
				if err != nil {
					return nil, err
				}
				var x subscriptions.Subscription
				if c.tx != nil {
					x, err = subscriptions.SetDiscountTx(c.ctx, c.tx, c.p.Scope, c.path("id"), ref, s.now(c.p))
				} else {
					x, err = subscriptions.SetDiscount(c.ctx, s.db, c.p.Scope, c.path("id"), ref, s.now(c.p))
				}
				return wireOf(x, err, subscriptions.Subscription.Wire)
			},
		},
	}
}

// listCouponsOperation is GET /v1/coupons and list_coupons: a list like the
// others, except that each coupon's valid is judged by the caller's clock
// (a test clock moves redeem_by into the past).
func listCouponsOperation() operation {
	op := listOperation("GET /v1/coupons", "list_coupons", "coupons", "Lists coupons, newest first, with times_redeemed and valid.",
		apispec.Operation{ID: "listCoupons", Tag: "Coupons", Summary: "List coupons", Query: listParams,
			Responses: listed[wire.Coupon]("coupons"), Errors: errs(apperr.InvalidRequest)},
		nil, coupons.List, func(_ *Server, x coupons.Coupon) wire.Coupon { return wire.Coupon{} })
	fetch := func(s *Server, ctx context.Context, p auth.Principal, params page.Params) (wire.List, error) {
		res, err := coupons.List(ctx, s.db, p.Scope, params)
		if err != nil {
			return wire.List{}, err
		}
		now := s.now(p)
		return toList(res, func(x coupons.Coupon) wire.Coupon { return x.Wire(now) }), nil
	}
	op.run = func(s *Server, c *call) (any, error) {
		params, err := page.DecodeArgs(c.args)
		if err != nil {
			return nil, err
		}
		return fetch(s, c.ctx, c.p, params)
	}
	op.rest = func(s *Server, w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		params, err := page.ParseQuery(r.URL.Query())
		if err != nil {
			return err
		}
		l, err := fetch(s, r.Context(), p, params)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, l)
		return nil
	}
	return op
}

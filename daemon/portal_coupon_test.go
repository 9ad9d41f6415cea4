package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// Applying a coupon code from the portal: the API's change and event, a
// plain error for a code that cannot be used (and nothing changed), and
// the refusals every portal action has.
func TestPortalApplyCoupon(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	launch, err := p.c.CreateCoupon(p.ctx, client.CouponParams{PercentOff: 20, Duration: "repeating", DurationInPeriods: 3, Code: "LAUNCH"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := p.c.CreateCoupon(p.ctx, client.CouponParams{PercentOff: 50, Duration: "once", Code: "OLD"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.ArchiveCoupon(p.ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.CreateCoupon(p.ctx, client.CouponParams{PercentOff: 10, Duration: "forever", Code: "BIZ", AppliesTo: []string{p.otherPlan.ID}}); err != nil {
		t.Fatal(err)
	}
	path := p.portalPath(p.session("alice"))
	pg := p.page(path)
	pg.has(t, []string{`id="apply-coupon-` + p.alice.ID + `"`, `name="code"`}, `id="discount-`)
	token := csrf(t, pg.body)
	apply := path + "/subscriptions/" + p.alice.ID + "/discount"
	updated := count(p.eventTypes(), "subscription.updated")

	// Codes that cannot be used: the overview again, with words for a
	// customer and none of the API's codes; nothing changes.
	for _, code := range []string{"NOPE", "OLD", "BIZ", "  ", strings.Repeat("X", 300)} {
		r := p.postForm(apply, url.Values{"csrf_token": {token}, "code": {code}})
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, `id="coupon-error"`) || !strings.Contains(r.body, "Nothing was changed") {
			t.Fatalf("code %q: %d\n%s", code, r.status, r.body)
		}
		r.has(t, []string{"Your account", p.alice.ID}, "invalid_coupon", "invalid_request", "does not apply")
	}
	if x := p.sub(p.alice.ID); x.Discount != nil {
		t.Fatalf("an unusable code changed the discount: %+v", x.Discount)
	}
	if n := count(p.eventTypes(), "subscription.updated"); n != updated {
		t.Fatalf("%d subscription.updated events after unusable codes, want %d", n, updated)
	}

	// Refusals: no form token, another customer's subscription.
	r := p.postForm(apply, url.Values{"code": {"LAUNCH"}})
	if r.status != http.StatusForbidden {
		t.Fatalf("without a form token: %d\n%s", r.status, r.body)
	}
	r = p.postForm(path+"/subscriptions/"+p.mallory.ID+"/discount", url.Values{"csrf_token": {token}, "code": {"LAUNCH"}})
	if r.status != http.StatusNotFound {
		t.Fatalf("another customer's subscription: %d\n%s", r.status, r.body)
	}
	for _, id := range []string{p.alice.ID, p.mallory.ID} {
		if x := p.sub(id); x.Discount != nil {
			t.Fatalf("%s discounted by a refused form: %+v", id, x.Discount)
		}
	}

	// A good code, any case: the API's discount and event.
	r = p.postForm(apply, url.Values{"csrf_token": {token}, "code": {" launch "}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != path+"?done=discounted" {
		t.Fatalf("apply: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	x := p.sub(p.alice.ID)
	if x.Discount == nil || x.Discount.Coupon.ID != launch.ID || x.Discount.End == nil {
		t.Fatalf("after apply: %+v", x.Discount)
	}
	if n := count(p.eventTypes(), "subscription.updated"); n != updated+1 {
		t.Fatalf("%d subscription.updated events, want %d", n, updated+1)
	}
	evs, err := p.c.ListEvents(p.ctx, client.ListParams{Limit: 1})
	if err != nil || len(evs.Data) != 1 || evs.Data[0].Type != "subscription.updated" ||
		!strings.Contains(string(evs.Data[0].Data), p.alice.ID) || !strings.Contains(string(evs.Data[0].Data), launch.ID) {
		t.Fatalf("newest event: %+v %v", evs, err)
	}
	cs, err := p.c.ListCoupons(p.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Data {
		if want := map[bool]int64{true: 1}[c.ID == launch.ID]; c.TimesRedeemed != want {
			t.Fatalf("coupon %s redeemed %d times, want %d", c.ID, c.TimesRedeemed, want)
		}
	}
	pg = p.page(path + "?done=discounted")
	pg.has(t, []string{"The coupon was applied", `id="discount-` + p.alice.ID + `"`, "20% off (coupon LAUNCH), until "})
}

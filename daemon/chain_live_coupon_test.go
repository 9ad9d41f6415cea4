package daemon_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// TestLiveCheckoutWithCoupon: a live plan page takes a coupon as a test
// one does; the payer signs the plan's full amount as the cap, the first
// charge pulled on chain is discounted (with its discount line), the
// redemption is counted once the activation is recorded, the renewals the
// coupon covers are discounted and the next is charged in full under the
// same authorization. An unusable code submits nothing.
func TestLiveCheckoutWithCoupon(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	one := 1
	plan, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro", Amount: "5000000", Interval: "custom", IntervalDays: &one})
	if err != nil {
		t.Fatal(err)
	}
	coupon, err := e.api.CreateCoupon(e.ctx, client.CouponParams{PercentOff: 20, Duration: "repeating", DurationInPeriods: 2, Code: "LIVE20"})
	if err != nil {
		t.Fatal(err)
	}
	st, _, page := e.raw("GET", "/checkout/"+plan.ID+"?coupon=live20", "", "")
	for _, want := range []string{`id="coupon-applied"`, "You pay 4.00 USDC today", `data-coupon="live20"`, `id="permit-cap">5.00 USDC per`} {
		if st != 200 || !contains(page, want) {
			t.Fatalf("page lacks %q: %d\n%s", want, st, page)
		}
	}

	terms := e.terms(plan.ID, addr(e.payer))
	planTD, planSig := signTerms(t, e.payer, terms["plan"])
	if planTD.Message["capPerPeriod"] != "5000000" {
		t.Fatalf("the payer signs a cap of %v, not the plan's amount", planTD.Message["capPerPeriod"])
	}
	permitTD, permitSig := signTerms(t, e.payer, terms["permit"])
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": planSig, "external_customer_id": "u_7",
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": permitSig}})
	body := string(b)
	if code, out := e.post("/checkout/"+plan.ID+"/authorization?coupon=NOPE", json.RawMessage(body)); code != 400 ||
		out["error"].(map[string]any)["code"] != "invalid_coupon" {
		t.Fatalf("an unusable coupon: %d %v", code, out)
	}
	code, out := e.post("/checkout/"+plan.ID+"/authorization?coupon="+url.QueryEscape("live20"), json.RawMessage(body))
	if code != 202 || out["status"] != "pending" {
		t.Fatalf("activation: %d %v", code, out)
	}
	if c := e.coupon(coupon.ID); c.TimesRedeemed != 0 {
		t.Fatalf("counted before the chain confirmed it: %d", c.TimesRedeemed)
	}
	e.until("subscription.active", func() bool { return len(e.events("subscription.active")) == 1 })
	if got := e.usdc(addr(e.merchant)); got != 4_000_000 {
		t.Fatalf("first charge: merchant has %d", got)
	}
	subs, err := e.api.ListSubscriptions(e.ctx, client.ListParams{})
	if err != nil || len(subs.Data) != 1 {
		t.Fatalf("subscriptions %+v %v", subs, err)
	}
	sub := subs.Data[0]
	if sub.Discount == nil || sub.Discount.Coupon.ID != coupon.ID || *sub.Amount != "5000000" {
		t.Fatalf("subscription: %s", sub.Raw)
	}
	if c := e.coupon(coupon.ID); c.TimesRedeemed != 1 {
		t.Fatalf("times_redeemed %d, want 1", c.TimesRedeemed)
	}

	// The second day is discounted too, the third charged in full: the
	// payer's cap covers the plan's amount.
	now := time.Now()
	for day, want := range []int64{8_000_000, 13_000_000} {
		chaintest.AdjustTime(t, e.sim, 24*time.Hour+time.Minute)
		e.sim.Commit()
		now = now.Add(24*time.Hour + 2*time.Minute)
		e.until("a renewal", func() bool {
			if err := e.d.Jobs().Drain(e.ctx, "subscription-billing", now); err != nil {
				t.Fatal(err)
			}
			now = now.Add(20 * time.Second) // past the pending charge's recheck
			return len(e.events("subscription.renewed")) == day+1
		})
		if got := e.usdc(addr(e.merchant)); got != want {
			t.Fatalf("after renewal %d: merchant has %d, want %d", day+1, got, want)
		}
	}
	pays, err := e.api.ListPayments(e.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := amounts(t, pays.Data); !same(got, "5000000", "4000000 plan=5000000 discount=-1000000", "4000000 plan=5000000 discount=-1000000") {
		t.Fatalf("payments, newest first: %v", got)
	}
}

// coupon reads a coupon of the live merchant by id.
func (e *liveEnv) coupon(id string) client.Coupon {
	e.t.Helper()
	l, err := e.api.ListCoupons(e.ctx, client.ListParams{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range l.Data {
		if c.ID == id {
			return c
		}
	}
	e.t.Fatalf("no coupon %s", id)
	return client.Coupon{}
}

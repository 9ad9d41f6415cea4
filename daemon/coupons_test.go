package daemon_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// line is a payment line as the tests read it.
type line struct {
	Kind   string `json:"kind"`
	Amount string `json:"amount"`
}

// coupon creates a coupon or fails the test.
func (f *moneyFixture) coupon(p client.CouponParams) *client.Coupon {
	f.t.Helper()
	c, err := f.c.CreateCoupon(f.ctx, p)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// charges returns the subscription's payments, oldest first.
func (f *moneyFixture) charges(subID string) []client.Payment {
	f.t.Helper()
	page, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []client.Payment
	for i := len(page.Data) - 1; i >= 0; i-- {
		if p := page.Data[i]; p.SubscriptionID != nil && *p.SubscriptionID == subID {
			out = append(out, p)
		}
	}
	return out
}

// amounts are the payments' amounts, and each one's lines as kind=amount.
func amounts(t testing.TB, pays []client.Payment) []string {
	t.Helper()
	var out []string
	for _, p := range pays {
		var ls []line
		if len(p.Lines) > 0 {
			if err := json.Unmarshal(p.Lines, &ls); err != nil {
				t.Fatal(err)
			}
		}
		s := p.Amount
		for _, l := range ls {
			s += " " + l.Kind + "=" + l.Amount
		}
		out = append(out, s)
	}
	return out
}

func same(got []string, want ...string) bool {
	return strings.Join(got, "|") == strings.Join(want, "|")
}

// Percent off rounds half up once; repeating covers its periods, then the
// discount is gone; an amount off forever applies to every renewal; a
// renewal discounted to zero moves nothing but renews; null removes a
// discount. Test-clock advances drive all of it.
func TestCouponDurationsAcrossRenewals(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000002", Interval: "week"})
	spring := f.coupon(client.CouponParams{PercentOff: 25, Duration: "repeating", DurationInPeriods: 2, Code: "Spring-25", Name: "Spring"})
	if spring.TimesRedeemed != 0 || !spring.Valid || spring.Status != "active" || *spring.Code != "Spring-25" || spring.Object != "coupon" ||
		!strings.HasPrefix(spring.ID, "coupon_") {
		t.Fatalf("created: %s", spring.Raw)
	}
	res, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u1", Coupon: "spring-25"})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Subscription
	if x.Discount == nil || x.Discount.Coupon.ID != spring.ID || x.Discount.End == nil || !x.Discount.End.Equal(x.CurrentPeriodEnd.AddDate(0, 0, 7)) {
		t.Fatalf("subscription after checkout: %s", x.Raw)
	}
	// 25% of 1,000,002 is 250,000.5: rounded half up to 250,001 off.
	if got := amounts(t, f.charges(x.ID)); !same(got, "750001 plan=1000002 discount=-250001") {
		t.Fatalf("first charge: %v", got)
	}
	f.advance("168h")
	if got := f.sub(x.ID); got.Discount != nil {
		t.Fatalf("the discount covered its 2 periods and should be gone: %s", got.Raw)
	}
	f.advance("168h")
	if got := amounts(t, f.charges(x.ID)); !same(got, "750001 plan=1000002 discount=-250001", "750001 plan=1000002 discount=-250001", "1000002") {
		t.Fatalf("repeating for 2 periods: %v", got)
	}

	// An amount off, forever, applied by id: every later renewal.
	off := f.coupon(client.CouponParams{AmountOff: "300000", Duration: "forever"})
	after, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, off.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Discount == nil || after.Discount.Coupon.ID != off.ID || after.Discount.End != nil {
		t.Fatalf("after applying: %s", after.Raw)
	}
	if types := f.eventTypes(); types[len(types)-1] != "subscription.updated" {
		t.Fatalf("events: %v", types)
	}
	up, err := f.c.UpcomingCharge(f.ctx, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if up.Amount != "700002" {
		t.Fatalf("upcoming: %s", up.Raw)
	}
	f.advance("168h")
	f.advance("168h")

	// 100% once: the next renewal moves nothing, makes no payment and still
	// renews; the one after is charged in full.
	free := f.coupon(client.CouponParams{PercentOff: 100, Duration: "once", Code: "FREEWEEK"})
	if _, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, "freeweek"); err != nil {
		t.Fatal(err)
	}
	before := f.sub(x.ID)
	f.advance("168h")
	renewed := f.sub(x.ID)
	if !renewed.CurrentPeriodStart.Equal(before.CurrentPeriodEnd.UTC()) || *renewed.LatestPaymentID != *before.LatestPaymentID ||
		renewed.Status != "active" || renewed.Discount != nil {
		t.Fatalf("a renewal discounted to zero: before %s, after %s", before.Raw, renewed.Raw)
	}
	if types := f.eventTypes(); types[len(types)-1] != "subscription.renewed" {
		t.Fatalf("events: %v", types)
	}
	// Removing a discount: the forever coupon was replaced already; apply
	// it again, then remove it.
	if _, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, off.ID); err != nil {
		t.Fatal(err)
	}
	removed, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, "")
	if err != nil || removed.Discount != nil {
		t.Fatalf("removed: %v %v", err, removed)
	}
	f.advance("168h")
	if got := amounts(t, f.charges(x.ID)); !same(got, "750001 plan=1000002 discount=-250001", "750001 plan=1000002 discount=-250001", "1000002",
		"700002 plan=1000002 discount=-300000", "700002 plan=1000002 discount=-300000", "1000002") {
		t.Fatalf("charges: %v", got)
	}
	list, err := f.c.ListCoupons(f.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	redeemed := map[string]int64{}
	for _, c := range list.Data {
		redeemed[c.ID] = c.TimesRedeemed
	}
	if len(list.Data) != 3 || list.Data[0].ID != free.ID || redeemed[spring.ID] != 1 || redeemed[off.ID] != 2 || redeemed[free.ID] != 1 {
		t.Fatalf("list: %+v", redeemed)
	}
}

// A metered plan's usage is rated, capped, then discounted: the discount
// line follows the cap line and takes its percent of the capped amount.
func TestCouponOnCappedMeteredPlan(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	m, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.plan(client.PlanParams{Name: "Tokens", Amount: "5000000", Interval: "week", UsageType: "metered", Meter: m.ID,
		PricingModel: []byte(`{"kind":"per_unit","unitAmount":1000}`)})
	f.coupon(client.CouponParams{PercentOff: 10, Duration: "once", Code: "TENOFF", AppliesTo: []string{p.ID}})
	res, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "m1", Coupon: "TENOFF"})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Subscription
	if x.Discount == nil || x.LatestPaymentID != nil {
		t.Fatalf("a metered checkout charges nothing and keeps its discount for the period's charge: %s", x.Raw)
	}
	sendUsage(t, f.c, "tokens", "m1", "10000") // rated 10,000,000, capped at 5,000,000
	f.advance("169h")
	if got := amounts(t, f.charges(x.ID)); !same(got, "4500000 usage=10000000 cap=-5000000 discount=-500000") {
		t.Fatalf("charges: %v", got)
	}
	sendUsage(t, f.c, "tokens", "m1", "3000")
	f.advance("168h")
	if got := amounts(t, f.charges(x.ID)); len(got) != 2 || got[1] != "3000000 usage=3000000" {
		t.Fatalf("the once coupon covered one period only: %v", got)
	}
}

// However many checkouts race for a coupon's last redemptions, exactly
// max_redemptions succeed; the others are invalid_coupon and leave nothing.
func TestCouponMaxRedemptionsUnderConcurrency(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	c := f.coupon(client.CouponParams{PercentOff: 50, Duration: "once", Code: "FIRST5", MaxRedemptions: 5})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "racer" + string(rune('A'+i)), Coupon: "first5"})
			code := "ok"
			if err != nil {
				code = err.Error()
				if e, ok := err.(*client.Error); ok {
					code = e.Code
				}
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes["ok"] != 5 || codes["invalid_coupon"] != 27 {
		t.Fatalf("outcomes: %v", codes)
	}
	list, err := f.c.ListCoupons(f.ctx, client.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Data[0]; got.ID != c.ID || got.TimesRedeemed != 5 || got.Valid {
		t.Fatalf("coupon after the race: %s", got.Raw)
	}
	subs, err := f.c.ListSubscriptions(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(subs.Data) != 5 {
		t.Fatalf("%d subscriptions, want 5", len(subs.Data))
	}
}

// Coupons that cannot be redeemed are invalid_coupon at checkout and on a
// subscription: unknown, archived, expired by the test clock, exhausted,
// or for another plan.
func TestCouponRefusedWhenUnusable(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	other := f.plan(client.PlanParams{Name: "Other", Amount: "2000000", Interval: "week"})
	x := f.subscribe(p.ID, rail.WalletSucceeds, "u1")
	now := f.sub(x.ID).CreatedAt
	f.coupon(client.CouponParams{PercentOff: 10, Duration: "once", Code: "SOON", RedeemBy: now.Add(48 * time.Hour)})
	archived := f.coupon(client.CouponParams{PercentOff: 10, Duration: "once", Code: "GONE"})
	if a, err := f.c.ArchiveCoupon(f.ctx, archived.ID); err != nil || a.Status != "archived" || a.Valid || a.ArchivedAt == nil {
		t.Fatalf("archive: %v %v", err, a)
	}
	if _, err := f.c.ArchiveCoupon(f.ctx, archived.ID); err != nil {
		t.Fatalf("archiving again: %v", err)
	}
	f.coupon(client.CouponParams{PercentOff: 10, Duration: "once", Code: "ONCE", MaxRedemptions: 1})
	f.coupon(client.CouponParams{PercentOff: 10, Duration: "once", Code: "OTHERPLAN", AppliesTo: []string{other.ID}})
	if _, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, "once"); err != nil {
		t.Fatal(err)
	}
	f.advance("49h") // SOON expires
	for _, code := range []string{"NOPE", "GONE", "SOON", "ONCE", "OTHERPLAN", "a\x00b", "\xff\xfe"} {
		_, err := f.c.SetSubscriptionDiscount(f.ctx, x.ID, code)
		if code == "a\x00b" {
			apiErr(t, err, 400, "invalid_request") // not text at all
		} else {
			apiErr(t, err, 400, "invalid_coupon") // the client sent \xff\xfe as U+FFFD
		}
		_, err = f.c.Pay(f.ctx, p.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: "u2", Coupon: code})
		if e := apiErr(t, err, 400, err.(*client.Error).Code); e.Code != "invalid_coupon" && e.Code != "invalid_request" {
			t.Fatalf("%q at checkout: %v", code, err)
		}
	}
	if _, err := f.c.SetSubscriptionDiscount(f.ctx, "sub_nope", "ONCE"); err == nil {
		t.Fatal("an unknown subscription took a coupon")
	}
	list, err := f.c.ListCoupons(f.ctx, client.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Data {
		// OTHERPLAN is valid: redeemable, for its own plan.
		if c.Valid != (*c.Code == "OTHERPLAN") || (*c.Code == "ONCE") != (c.TimesRedeemed == 1) {
			t.Errorf("%s: valid %v, redeemed %d", *c.Code, c.Valid, c.TimesRedeemed)
		}
	}
	// No checkout above made anything: u2 has no subscription.
	subs, err := f.c.ListSubscriptions(f.ctx, client.ListParams{Limit: 10})
	if err != nil || len(subs.Data) != 1 {
		t.Fatalf("subscriptions: %v %d", err, len(subs.Data))
	}
}

// Bad create requests are 400 invalid_request naming the field; a code is
// unique whatever its letter case; applies_to must name the merchant's own
// plans in the key's mode.
func TestCouponCreateRefusals(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	p := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	otherMerchant := f.client(func() string { _, k := f.bundle.key(f.merchant("Other"), tenant.Test); return k }())
	foreign, err := otherMerchant.CreatePlan(f.ctx, client.PlanParams{Name: "Theirs", Amount: "1000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	_, liveKey := f.bundle.key(f.m, tenant.Live)
	live, err := f.client(liveKey).CreatePlan(f.ctx, client.PlanParams{Name: "Live", Amount: "1000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	f.coupon(client.CouponParams{PercentOff: 5, Duration: "forever", Code: "Launch_2026"})
	for _, c := range []struct{ body, field string }{
		{`{"duration":"once"}`, "percent_off"},
		{`{"percent_off":10,"amount_off":5,"duration":"once"}`, "amount_off"},
		{`{"percent_off":10,"duration":"repeating"}`, "duration_in_periods"},
		{`{"percent_off":10,"duration":"once","duration_in_periods":3}`, "duration_in_periods"},
		{`{"percent_off":10,"duration":"repeating","duration_in_periods":121}`, "duration_in_periods"},
		{`{"percent_off":0,"duration":"once"}`, "percent_off"},
		{`{"percent_off":101,"duration":"once"}`, "percent_off"},
		{`{"percent_off":1e2,"duration":"once"}`, "percent_off"},
		{`{"percent_off":99999999999999999999999999,"duration":"once"}`, "percent_off"},
		{`{"amount_off":"99999999999999999999999999999","duration":"once"}`, "amount_off"},
		{`{"amount_off":-5,"duration":"once"}`, "amount_off"},
		{`{"amount_off":0,"duration":"once"}`, "amount_off"},
		{`{"amount_off":1.5,"duration":"once"}`, "amount_off"},
		{`{"percent_off":10,"duration":"sometimes"}`, "duration"},
		{`{"percent_off":10}`, "duration"},
		{`{"percent_off":10,"duration":"once","code":"ab"}`, "code"},
		{`{"percent_off":10,"duration":"once","code":"has space"}`, "code"},
		{`{"percent_off":10,"duration":"once","code":"a\u0000bc"}`, "code"},
		{`{"percent_off":10,"duration":"once","code":"` + strings.Repeat("x", 41) + `"}`, "code"},
		{`{"percent_off":10,"duration":"once","code":"LAUNCH_2026"}`, "code"},
		{`{"percent_off":10,"duration":"once","code":"launch_2026"}`, "code"},
		{`{"percent_off":10,"duration":"once","max_redemptions":0}`, "max_redemptions"},
		{`{"percent_off":10,"duration":"once","redeem_by":"2001-01-01T00:00:00Z"}`, "redeem_by"},
		{`{"percent_off":10,"duration":"once","redeem_by":"tomorrow"}`, "redeem_by"},
		{`{"percent_off":10,"duration":"once","applies_to":[]}`, "applies_to"},
		{`{"percent_off":10,"duration":"once","applies_to":"` + p.ID + `"}`, "applies_to"},
		{`{"percent_off":10,"duration":"once","applies_to":["` + foreign.ID + `"]}`, "applies_to"},
		{`{"percent_off":10,"duration":"once","applies_to":["` + live.ID + `"]}`, "applies_to"},
		{`{"percent_off":10,"duration":"once","applies_to":["` + p.ID + `","nope\u0000"]}`, "applies_to"},
		{`{"percent_off":10,"duration":"once","name":"` + strings.Repeat("é", 201) + `"}`, "name"},
		{`{"percent_off":10,"duration":"once","color":"red"}`, "color"},
		{`{"percent_off":10,"duration":"once","name":"a","name":"b"}`, "name"},
	} {
		status, _, body := f.raw("POST", "/v1/coupons", f.key, c.body)
		if status != 400 || !strings.Contains(body, `"code":"invalid_request"`) || !strings.Contains(body, `"message":"`+c.field) {
			t.Errorf("%s: %d %s", c.body, status, body)
		}
	}
	status, _, body := f.raw("POST", "/v1/coupons", f.key, "{\"percent_off\":10,\"duration\":\"once\",\"name\":\"\xff\"}")
	if status != 400 {
		t.Errorf("invalid UTF-8: %d %s", status, body)
	}
	list, err := f.c.ListCoupons(f.ctx, client.ListParams{})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("only the first coupon exists: %v %d", err, len(list.Data))
	}
	if _, err := f.c.ArchiveCoupon(f.ctx, "coupon_nope"); err == nil {
		t.Fatal("archived an unknown coupon")
	}
}

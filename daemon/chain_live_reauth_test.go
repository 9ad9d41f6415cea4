package daemon_test

import (
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
)

// liveSubscribe subscribes the env's payer to plan from its wallet and
// returns the subscription once recorded.
func (e *liveEnv) liveSubscribe(planID string) client.Subscription {
	e.t.Helper()
	code, out := e.authorize(planID, e.signedPlan(e.payer, e.terms(planID, addr(e.payer))))
	if code != 202 {
		e.t.Fatalf("activation: %d %v", code, out)
	}
	e.until("subscription.active", func() bool { return len(e.events("subscription.active")) == 1 })
	subs, err := e.api.ListSubscriptions(e.ctx, client.ListParams{})
	if err != nil || len(subs.Data) != 1 {
		e.t.Fatalf("subscriptions %+v %v", subs, err)
	}
	return subs.Data[0]
}

// signedPlan is the body a page posts: terms' plan and permit signed by k.
func (e *liveEnv) signedPlan(k *ecdsa.PrivateKey, terms map[string]json.RawMessage) string {
	e.t.Helper()
	planTD, planSig := signTerms(e.t, k, terms["plan"])
	permitTD, permitSig := signTerms(e.t, k, terms["permit"])
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": planSig,
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": permitSig}})
	return string(b)
}

// reauthorization asks for a change above the authorization and returns
// the path of its page (the checkout_url of authorization_required).
func (e *liveEnv) reauthorization(subID, planID, at string) string {
	e.t.Helper()
	_, err := e.api.ChangeSubscription(e.ctx, subID, client.ChangeParams{Plan: planID, At: at})
	ae := apiErr(e.t, err, 409, "authorization_required")
	u, perr := url.Parse(ae.CheckoutURL)
	if perr != nil || !strings.HasPrefix(u.Path, "/checkout/"+subID) || u.Query().Get("plan") != planID || u.Query().Get("at") != at {
		e.t.Fatalf("checkout_url %q", ae.CheckoutURL)
	}
	return u.RequestURI()
}

// changeTerms asks the re-authorization's terms for payer.
func (e *liveEnv) changeTerms(page string, payer *ecdsa.PrivateKey) (int, map[string]json.RawMessage) {
	e.t.Helper()
	u, _ := url.Parse(page)
	q := u.Query()
	q.Set("payer", addr(payer).Hex())
	st, _, body := e.raw("GET", u.Path+"/authorization?"+q.Encode(), "", "")
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		e.t.Fatalf("terms: %d %s", st, body)
	}
	return st, out
}

// postAll posts the bodies to the re-authorization's endpoint at once and
// returns the answers, each with its status code as "code".
func (e *liveEnv) postAll(page string, bodies []string) []map[string]any {
	e.t.Helper()
	u, _ := url.Parse(page)
	out := make([]map[string]any, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() {
			resp, err := http.Post(e.url+u.Path+"/authorization?"+u.RawQuery, "application/json", strings.NewReader(b))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			out[i] = map[string]any{}
			errs[i] = json.NewDecoder(resp.Body).Decode(&out[i])
			out[i]["code"] = float64(resp.StatusCode)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// postChange posts a signed body to the re-authorization's endpoint.
func (e *liveEnv) postChange(page, body string) (int, map[string]any) {
	e.t.Helper()
	u, _ := url.Parse(page)
	st, _, out := e.raw("POST", u.Path+"/authorization?"+u.RawQuery, "", body)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("POST change authorization: %d %s", st, out)
	}
	return st, m
}

func (e *liveEnv) twoPlans() (client.Plan, client.Plan) {
	e.t.Helper()
	one := 1
	for _, k := range []string{"basic", "pro"} {
		if _, err := e.api.CreateFeature(e.ctx, client.FeatureParams{Key: k, Name: k}); err != nil {
			e.t.Fatal(err)
		}
	}
	basic, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Basic", Amount: "5000000", Interval: "custom", IntervalDays: &one,
		Features: []client.PlanFeature{{FeatureKey: "basic"}}})
	if err != nil {
		e.t.Fatal(err)
	}
	pro, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro", Amount: "8000000", Interval: "custom", IntervalDays: &one,
		Features: []client.PlanFeature{{FeatureKey: "pro"}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return *basic, *pro
}

// renew moves the chain and the billing engine a period on and waits for
// the renewal.
func (e *liveEnv) renew(n int) {
	e.t.Helper()
	chaintest.AdjustTime(e.t, e.sim, 24*time.Hour+time.Minute)
	e.sim.Commit()
	now := time.Now().Add(24*time.Hour + 2*time.Minute)
	e.until("subscription.renewed", func() bool {
		if err := e.d.Jobs().Drain(e.ctx, "subscription-billing", now); err != nil {
			e.t.Fatal(err)
		}
		now = now.Add(20 * time.Second)
		return len(e.events("subscription.renewed")) == n
	})
}

// TestLiveChangeNowAboveAuthorization: a live upgrade now above what the
// payer authorized on chain. The API answers authorization_required with
// the page; another wallet gets no terms, and a plan signed by the wrong
// key is refused before any gas is spent. The payer's signed new plan is
// activated with the proration as its first charge; posting it twice, and
// a second signed plan meanwhile, charge once. The change is made when the
// chain confirms it (subscription.updated once, the features switch), a
// replay afterwards answers the subscription, and the next renewal charges
// the new amount on the new plan.
func TestLiveChangeNowAboveAuthorization(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("first period: merchant has %d", got)
	}
	page := e.reauthorization(sub.ID, pro.ID, "now")
	if _, _, html := e.raw("GET", page, "", ""); !contains(html, `id="live-pay"`) || !contains(html, "Authorize the new plan from my wallet") ||
		!contains(html, `data-authorization-url="/checkout/`+sub.ID+`/authorization?at=now&amp;plan=`+pro.ID+`"`) {
		t.Fatalf("page:\n%s", html)
	}

	stranger := newKey(t)
	if code, out := e.changeTerms(page, stranger); code != 400 || !contains(string(out["error"]), "payer") {
		t.Fatalf("terms for another wallet: %d %s", code, out["error"])
	}
	code, terms := e.changeTerms(page, e.payer)
	if code != 200 || string(terms["kind"]) != `"plan"` {
		t.Fatalf("terms: %d %v", code, terms)
	}
	nonce := e.relayerNonce()
	if code, out := e.postChange(page, e.signedPlan(stranger, terms)); code != 402 || !contains(errorMessage(out), "invalid_signature") {
		t.Fatalf("signed by another key: %d %v", code, out)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("a wrong signature cost gas")
	}

	var tampered map[string]any
	if err := json.Unmarshal([]byte(e.signedPlan(e.payer, terms)), &tampered); err != nil {
		t.Fatal(err)
	}
	tampered["plan"].(map[string]any)["capPerPeriod"] = "5000000"
	tb, _ := json.Marshal(tampered)
	if code, out := e.postChange(page, string(tb)); code != 400 || !contains(errorMessage(out), "plan.capPerPeriod") {
		t.Fatalf("a plan capped at the old amount: %d %v", code, out)
	}

	// Double submits and other signed plans, all at once: one activation.
	body := e.signedPlan(e.payer, terms)
	_, terms2 := e.changeTerms(page, e.payer)
	bodies := []string{body, body, body, e.signedPlan(e.payer, terms2)}
	for range 4 {
		_, more := e.changeTerms(page, e.payer)
		bodies = append(bodies, e.signedPlan(e.payer, more))
	}
	answers := e.postAll(page, bodies)
	receipt, _ := answers[0]["receipt_url"].(string)
	for _, a := range answers {
		if a["code"] != 202.0 || a["status"] != "pending" || a["receipt_url"] != receipt || !contains(receipt, "activation=") {
			t.Fatalf("racing submissions: %v", answers)
		}
	}
	if got := e.relayerNonce(); got != nonce+1 {
		t.Fatalf("racing submissions sent %d transactions", got-nonce)
	}
	if _, _, html := e.raw("GET", receipt, "", ""); !contains(html, `id="live-pending"`) {
		t.Fatalf("pending page:\n%s", html)
	}
	e.until("subscription.updated", func() bool { return len(e.events("subscription.updated")) == 1 })
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != pro.ID || *got.Amount != "8000000" || got.Status != "active" {
		t.Fatalf("after the change: %+v %v", got, err)
	}
	proration := e.usdc(addr(e.merchant)) - 5_000_000
	if proration <= 2_900_000 || proration > 3_000_000 {
		t.Fatalf("proration charged: %d", proration)
	}
	pay, err := e.api.GetPayment(e.ctx, *got.LatestPaymentID)
	if err != nil || pay.Amount != strconv.FormatInt(proration, 10) || !contains(string(pay.Lines), `"proration"`) {
		t.Fatalf("proration payment %+v %v", pay, err)
	}
	if ent, err := e.api.CheckEntitlement(e.ctx, *sub.CustomerID, "pro"); err != nil || !ent.Entitled {
		t.Fatalf("pro after the change %+v %v", ent, err)
	}
	if _, _, html := e.raw("GET", receipt, "", ""); !contains(html, "Your plan changed") || !contains(html, `id="subscription-plan">`) {
		t.Fatalf("receipt page:\n%s", html)
	}

	// Replays after the change: nothing more moves.
	if code, again := e.postChange(page, body); code != 200 || again["status"] != "succeeded" || again["subscription"] == nil {
		t.Fatalf("replay after the change: %d %v", code, again)
	}
	_, terms3 := e.changeTerms(page, e.payer)
	if terms3["error"] == nil {
		t.Fatalf("terms after the change: %v", terms3)
	}
	if code, again := e.postChange(page, e.signedPlan(e.payer, terms2)); code != 200 || again["status"] != "succeeded" {
		t.Fatalf("another plan after the change: %d %v", code, again)
	}
	e.step()
	if got := e.usdc(addr(e.merchant)); got != 5_000_000+proration || len(e.events("subscription.updated")) != 1 {
		t.Fatalf("after the replays: merchant has %d, %d updates", got, len(e.events("subscription.updated")))
	}

	e.renew(1)
	if got := e.usdc(addr(e.merchant)); got != 5_000_000+proration+8_000_000 {
		t.Fatalf("after the renewal: merchant has %d", got)
	}
}

// TestLiveChangeAtPeriodEndAboveAuthorization: a change at period end
// above the authorization activates the new plan without a charge; the
// change waits as pending and the next renewal charges the new amount on
// chain.
func TestLiveChangeAtPeriodEndAboveAuthorization(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	basic, pro := e.twoPlans()
	sub := e.liveSubscribe(basic.ID)
	page := e.reauthorization(sub.ID, pro.ID, "period_end")
	_, terms := e.changeTerms(page, e.payer)
	code, out := e.postChange(page, e.signedPlan(e.payer, terms))
	if code != 202 {
		t.Fatalf("change: %d %v", code, out)
	}
	e.until("subscription.updated", func() bool { return len(e.events("subscription.updated")) == 1 })
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != basic.ID || got.PendingPlanID == nil || *got.PendingPlanID != pro.ID {
		t.Fatalf("after the authorization: %+v %v", got, err)
	}
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("charged at a period-end change: merchant has %d", got)
	}
	// Within the authorization now: the API takes the same change again.
	if _, err := e.api.ChangeSubscription(e.ctx, sub.ID, client.ChangeParams{Plan: pro.ID, At: "period_end"}); err != nil {
		t.Fatal(err)
	}
	e.renew(1)
	if got := e.usdc(addr(e.merchant)); got != 13_000_000 {
		t.Fatalf("after the renewal: merchant has %d", got)
	}
	got, err = e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.PlanID != pro.ID || got.PendingPlanID != nil {
		t.Fatalf("after the renewal: %+v %v", got, err)
	}
}

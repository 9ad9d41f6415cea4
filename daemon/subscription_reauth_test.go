package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// An upgrade above what the payer authorized waits for the payer: the
// checkout_url shows the new plan with the subscription's wallet, another
// wallet cannot authorize it, and the payer's authorization makes the
// change, charging the proration then.
func TestPlanChangeReauthorization(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(basic.ID, rail.WalletSucceeds, "u_1")
	f.advance("5d")
	_, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID, At: "now"})
	e := apiErr(t, err, http.StatusConflict, "authorization_required")
	u, err := url.Parse(e.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	pg := f.page(u.RequestURI())
	pg.is(t, http.StatusOK, []string{"Authorize your new plan", x.ID, "20.00 USDC", strings.ToLower(rail.WalletSucceeds)}, rail.WalletInsufficient)

	pay := func(wallet string) pageResp {
		req, err := http.NewRequest("POST", f.url+u.Path+"/pay?"+u.RawQuery, strings.NewReader(`{"payer":"`+wallet+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		return f.do(req)
	}
	if r := pay(rail.WalletInsufficient); r.status != 400 || !strings.Contains(r.body, `"message":"payer: `) {
		t.Fatalf("another wallet: %d %s", r.status, r.body)
	}
	if got := f.sub(x.ID); got.PlanID != basic.ID {
		t.Fatalf("changed before the authorization: %s", got.Raw)
	}
	r := pay(rail.WalletSucceeds)
	if r.status != 200 || !strings.Contains(r.body, `"plan_id":"`+pro.ID+`"`) {
		t.Fatalf("authorized: %d %s", r.status, r.body)
	}
	// The test rail mirrors the chain: the payer's new authorization is an
	// activation on its ledger, and the subscription charges under it now.
	var key string
	if err := f.db.Get(&key, `SELECT s.authorization_key FROM subscriptions s JOIN rail_settlements r
		ON r.merchant_id = s.merchant_id AND r.key = s.authorization_key AND r.kind = 'activate' AND r.status = 'succeeded'
		WHERE s.merchant_id = $1 AND s.id = $2`, f.m, x.ID); err != nil || !strings.Contains(key, ":reauth:") {
		t.Fatalf("the re-authorization on the rail: %q %v", key, err)
	}
	// Confirming again changes nothing more: the plan is the new one already.
	if r := pay(rail.WalletSucceeds); r.status != 200 {
		t.Fatalf("again: %d %s", r.status, r.body)
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 10})
	if err != nil || len(pays.Data) != 2 {
		t.Fatalf("%v %+v", err, pays)
	}
	// Now the payer authorized 20 USDC: down and up again needs nothing new.
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
}

// A payer whose wallet authorizes once and then revokes: the new
// authorization is made on the test rail, but the proration charged under it
// is refused, so the whole change is undone (402) and the rail keeps nothing
// of it.
func TestPlanChangeReauthorizationRefused(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(basic.ID, rail.WalletRevokesAfter1st, "u_1")
	f.advance("5d")
	_, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID, At: "now"})
	e := apiErr(t, err, http.StatusConflict, "authorization_required")
	u, err := url.Parse(e.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", f.url+u.Path+"/pay?"+u.RawQuery, strings.NewReader(`{"payer":"`+rail.WalletRevokesAfter1st+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r := f.do(req); r.status != http.StatusPaymentRequired || !strings.Contains(r.body, "authorization_revoked") {
		t.Fatalf("revoked: %d %s", r.status, r.body)
	}
	if got := f.sub(x.ID); got.PlanID != basic.ID {
		t.Fatalf("changed though refused: %s", got.Raw)
	}
	var n int
	if err := f.db.Get(&n, `SELECT count(*) FROM rail_settlements WHERE merchant_id = $1 AND key LIKE '%:reauth:%'`, f.m); err != nil || n != 0 {
		t.Fatalf("%d re-authorizations left on the rail: %v", n, err)
	}
}

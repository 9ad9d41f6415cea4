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

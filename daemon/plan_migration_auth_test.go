package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// A migration to a dearer plan moves only the subscriptions whose payer
// authorized that much: the others are counted and listed, each with the
// page where its payer authorizes the new amount, and keep their plan
// (preview and migration alike). Once a payer authorizes there, the change
// at the period's end is scheduled, and running the migration again counts
// that subscription as moving.
func TestPlanMigrationNeedsAuthorization(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	low1 := f.subscribe(basic.ID, rail.WalletSucceeds, "u_1")
	low2 := f.subscribe(basic.ID, rail.WalletSucceeds, "u_2")
	// Subscribed at 20 USDC, then down to Basic: 20 is authorized.
	high := f.subscribe(pro.ID, rail.WalletSucceeds, "u_3")
	if _, err := f.c.ChangeSubscription(f.ctx, high.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	updated := count(f.eventTypes(), "subscription.updated")

	check := func(m *client.PlanMigration, moving int64, before, after string, needs ...*client.Subscription) {
		t.Helper()
		if m.Subscriptions != moving || m.AmountBefore != before || m.AmountAfter != after || m.AuthorizationRequired != int64(len(needs)) ||
			len(m.NeedsAuthorization) != len(needs) {
			t.Fatalf("migration: %s", m.Raw)
		}
		for i, x := range needs {
			a := m.NeedsAuthorization[i]
			if a.SubscriptionID != x.ID || a.AuthorizedAmount != "10000000" ||
				!strings.HasPrefix(a.CheckoutURL, f.url+"/checkout/"+x.ID+"?") || !strings.Contains(a.CheckoutURL, "plan="+pro.ID) ||
				!strings.Contains(a.CheckoutURL, "at=period_end") {
				t.Fatalf("needs authorization %d: %+v in %s", i, a, m.Raw)
			}
		}
	}
	pv, err := f.c.MigratePlan(f.ctx, basic.ID, client.MigrateParams{To: pro.ID, Preview: true})
	if err != nil {
		t.Fatal(err)
	}
	check(pv, 1, "10000000", "20000000", low1, low2)
	m, err := f.c.MigratePlan(f.ctx, basic.ID, client.MigrateParams{To: pro.ID})
	if err != nil {
		t.Fatal(err)
	}
	check(m, 1, "10000000", "20000000", low1, low2)
	if got := f.sub(high.ID); got.PendingPlanID == nil || *got.PendingPlanID != pro.ID {
		t.Fatalf("the authorized subscription was not scheduled: %s", got.Raw)
	}
	for _, x := range []*client.Subscription{low1, low2} {
		if got := f.sub(x.ID); got.PendingPlanID != nil {
			t.Fatalf("scheduled above its authorization: %s", got.Raw)
		}
	}
	if n := count(f.eventTypes(), "subscription.updated"); n != updated+1 {
		t.Fatalf("%d subscription.updated, want %d", n, updated+1)
	}

	// The first payer authorizes 20 USDC at their page: the change waits
	// for the period's end.
	u, err := url.Parse(m.NeedsAuthorization[0].CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", f.url+u.Path+"/pay?"+u.RawQuery, strings.NewReader(`{"payer":"`+rail.WalletSucceeds+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r := f.do(req); r.status != 200 {
		t.Fatalf("authorization: %d %s", r.status, r.body)
	}
	if got := f.sub(low1.ID); got.PlanID != basic.ID || got.PendingPlanID == nil || *got.PendingPlanID != pro.ID {
		t.Fatalf("after the authorization: %s", got.Raw)
	}
	m, err = f.c.MigratePlan(f.ctx, basic.ID, client.MigrateParams{To: pro.ID})
	if err != nil {
		t.Fatal(err)
	}
	check(m, 2, "20000000", "40000000", low2)

}

package cmd

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// plan migrate prints the subscriptions it left out because their payer
// authorized less than the new plan's amount, each with its whole page.
func TestPlanMigratePrintsAuthorizationsNeeded(t *testing.T) {
	t.Parallel()
	u := startPayAPI(t)
	ctx := context.Background()
	basic, err := u.c.CreatePlan(ctx, client.PlanParams{Name: "Basic", Amount: "10000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	pro, err := u.c.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "20000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	sub := u.cli(t, "", "checkout", "pay", basic.ID, "--wallet", rail.WalletSucceeds, "--json").object(t)["id"].(string)
	u.cli(t, "", "plan", "migrate", basic.ID, "--to", pro.ID, "--preview").want(t, ExitOK, "Subscriptions:", "0",
		"Left out:", "1 whose payer must authorize", "Send each payer", sub, "authorized 10.00 USDC", u.url+"/checkout/"+sub+"?at=period_end&plan="+pro.ID)
	m := u.cli(t, "", "plan", "migrate", basic.ID, "--to", pro.ID, "--json").object(t)
	if m["authorization_required"] != 1.0 || m["subscriptions"] != 0.0 {
		t.Fatalf("migration %v", m)
	}
}

package cmd

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// coupon create|list|archive|apply|remove and checkout pay --coupon against
// a real daemon.
func TestCouponCommands(t *testing.T) {
	t.Parallel()
	u := startPayAPI(t)
	ctx := context.Background()
	plan, err := u.c.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "10000000", Interval: "month"})
	if err != nil {
		t.Fatal(err)
	}
	u.cli(t, "", "coupon", "create", "--percent-off", "20", "--duration", "repeating", "--periods", "3", "--code", "LAUNCH",
		"--name", "Launch").want(t, ExitOK, "Created coupon coupon_", "Code:", "LAUNCH", "20% off", "3 periods", "0 of no limit", "every plan", "true")
	five := u.cli(t, "", "coupon", "create", "--amount-off", "5usdc", "--duration", "once", "--max-redemptions", "1",
		"--applies-to", plan.ID, "--redeem-by", "2099-01-01", "--json").object(t)
	if five["amount_off"] != "5000000" || five["max_redemptions"] != 1.0 || five["applies_to"].([]any)[0] != plan.ID || five["redeem_by"] == nil {
		t.Fatalf("coupon %v", five)
	}
	for _, bad := range [][]string{
		{"--duration", "once"},
		{"--percent-off", "10", "--amount-off", "1usdc", "--duration", "once"},
		{"--percent-off", "0", "--duration", "once"},
		{"--percent-off", "10", "--duration", "repeating"},
		{"--percent-off", "10", "--duration", "once", "--periods", "2"},
		{"--percent-off", "10", "--duration", "weekly"},
		{"--percent-off", "10", "--duration", "once", "--redeem-by", "soon"},
	} {
		u.cli(t, "", append([]string{"coupon", "create"}, bad...)...).want(t, ExitUsage)
	}
	u.cli(t, "", "coupon", "create", "--percent-off", "10", "--duration", "once", "--code", "launch").want(t, ExitError, "invalid_request", "code")

	x := u.cli(t, "", "checkout", "pay", plan.ID, "--wallet", rail.WalletSucceeds, "--coupon", "launch", "--json").object(t)
	if d, _ := x["discount"].(map[string]any); d == nil || d["coupon"].(map[string]any)["code"] != "LAUNCH" {
		t.Fatalf("subscription %v", x)
	}
	sub := x["id"].(string)
	u.cli(t, "", "payments", "list").want(t, ExitOK, "8.00 USDC")
	u.cli(t, "", "coupon", "apply", sub, five["id"].(string)).want(t, ExitOK, "Applied", sub, "Discount:", "5.00 USDC off")
	u.cli(t, "", "coupon", "apply", sub, five["id"].(string)).want(t, ExitError, "invalid_coupon")
	u.cli(t, "", "coupon", "remove", sub, "--json").object(t)
	u.cli(t, "", "coupon", "list").want(t, ExitOK, "LAUNCH", "20% off", "1/1", "no")
	u.cli(t, "", "coupon", "archive", five["id"].(string)).want(t, ExitOK, "Archived coupon", "archived")
	u.cli(t, "", "coupon", "archive", "coupon_nope").want(t, ExitError, "resource_not_found")
}

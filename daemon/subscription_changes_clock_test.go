package daemon_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// One advance of the test clock over several weeks applies a pending change
// at its period's end, in time order with the other subscriptions'
// renewals: subscription.updated carries the boundary's time, the feed
// never goes back in time, and every later renewal charges the new amount.
func TestPlanChangeDrivenByTestClock(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	big := f.plan(client.PlanParams{Name: "Weekly big", Amount: "10000000", Interval: "week"})
	small := f.plan(client.PlanParams{Name: "Weekly small", Amount: "5000000", Interval: "week"})
	daily := f.plan(client.PlanParams{Name: "Every 3 days", Amount: "1000000", Interval: "custom", IntervalDays: ptr(3)})
	x := f.subscribe(big.ID, rail.WalletSucceeds, "u_1")
	f.subscribe(daily.ID, rail.WalletSucceeds, "u_2")
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: small.ID}); err != nil {
		t.Fatal(err)
	}
	f.advance("22d")
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var updated []time.Time
	for i := range page.Data {
		if i > 0 && page.Data[i-1].CreatedAt.Before(page.Data[i].CreatedAt) {
			t.Fatalf("the feed goes back in time at %s %s", page.Data[i].Type, page.Data[i].ID)
		}
		if page.Data[i].Type == "subscription.updated" {
			updated = append(updated, page.Data[i].CreatedAt)
		}
	}
	// Newest first: the change taking effect, then the change being made.
	if len(updated) != 2 || !updated[0].Equal(*x.CurrentPeriodEnd) {
		t.Fatalf("subscription.updated at %v, want the change's and %s", updated, x.CurrentPeriodEnd)
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pays.Data {
		if p.SubscriptionID == nil || *p.SubscriptionID != x.ID {
			continue
		}
		n++
		want := "5000000"
		if p.PeriodStart.Equal(*x.CurrentPeriodStart) {
			want = "10000000"
		}
		if p.Amount != want {
			t.Fatalf("period %s charged %s, want %s", p.PeriodStart, p.Amount, want)
		}
	}
	if n != 4 { // the first week and three renewals
		t.Fatalf("%d payments of the weekly subscription, want 4", n)
	}
}

// An immediate downgrade races the renewal at the period's end: whichever
// takes the subscription's row first, the period is charged once, the plan
// ends up the new one, and the charge and the credit agree with the order
// they ran in.
func TestPlanChangeRacesRenewal(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")
	to := x.CurrentPeriodEnd.Add(-50 * time.Millisecond)
	if _, err := f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{To: &to}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{By: "1m"}); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	got := f.sub(x.ID)
	if got.PlanID != basic.ID || !got.CurrentPeriodStart.Equal(*x.CurrentPeriodEnd) {
		t.Fatalf("after the race: %s", got.Raw)
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var renewal []string
	for _, p := range pays.Data {
		if p.PeriodStart.Equal(*x.CurrentPeriodEnd) {
			renewal = append(renewal, p.Amount)
		}
	}
	bal, err := f.c.GetCreditBalance(f.ctx, *x.CustomerID)
	credit := "0"
	if err == nil {
		credit = bal.Balance
	}
	switch {
	case len(renewal) != 1:
		t.Fatalf("the renewal charged %v", renewal)
	case renewal[0] == "10000000" && credit == "0":
		// The change first: the last moments of Pro cost nothing back, and
		// the new period is Basic's.
	case renewal[0] == "20000000" && atLeast(credit, 9_000_000) && atLeast("10000000", mustInt(credit)):
		// The renewal first: a whole Pro period charged, and the
		// difference for what is left of it (all of it, for a change whose
		// time was read before the boundary) credited back.
	default:
		t.Fatalf("renewal %v with a credit of %s", renewal, credit)
	}
}

func mustInt(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func atLeast(s string, min int64) bool { return mustInt(s) >= min }

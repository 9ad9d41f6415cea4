package daemon_test

import (
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// 32 identical immediate upgrades race on one subscription: the row lock
// runs them one after another, one charges, the others find the plan
// changed and answer the subscription as it is. One proration payment, one
// subscription.updated.
func TestPlanChangeConcurrent(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")
	f.advance("3d")
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: pro.ID, At: "now"})
			if err == nil && got.PlanID != pro.ID {
				t.Errorf("answered plan %s", got.PlanID)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(pays.Data) != 2 {
		t.Fatalf("%d payments, want the first charge and one proration", len(pays.Data))
	}
	var n int
	if err := f.db.GetContext(f.ctx, &n, `SELECT count(*) FROM rail_settlements WHERE key LIKE 'chg:%:change:%'`); err != nil || n != 1 {
		t.Fatalf("%d proration settlements on the rail, %v", n, err)
	}
	if c := count(f.eventTypes(), "subscription.updated"); c != 2 {
		t.Fatalf("%d subscription.updated, want 2", c)
	}
}

// After a test-clock advance, the credit of a downgrade is exactly
// (new − old) × remaining ÷ period at the time the change carries, to the
// base unit.
func TestPlanChangeProrationAfterClockAdvance(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	x := f.subscribe(pro.ID, rail.WalletSucceeds, "u_1")
	f.advance("17d5h3m")
	if _, err := f.c.ChangeSubscription(f.ctx, x.ID, client.ChangeParams{Plan: basic.ID, At: "now"}); err != nil {
		t.Fatal(err)
	}
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 1})
	if err != nil || page.Data[0].Type != "subscription.updated" {
		t.Fatalf("%v %+v", err, page)
	}
	at := page.Data[0].CreatedAt
	period := int64(x.CurrentPeriodEnd.Sub(*x.CurrentPeriodStart) / time.Second)
	remaining := int64(x.CurrentPeriodEnd.Sub(at) / time.Second)
	// 10 USDC × remaining ÷ period, half up, in big integers.
	num := new(big.Int).Mul(big.NewInt(10_000_000), big.NewInt(remaining))
	want := new(big.Int).Div(new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), big.NewInt(period)), big.NewInt(2*period))
	bal, err := f.c.GetCreditBalance(f.ctx, *x.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Balance != want.String() {
		t.Fatalf("credit %s, want %s (%d of %d s left)", bal.Balance, want, remaining, period)
	}
	var reason string
	if err := f.db.GetContext(f.ctx, &reason, `SELECT reason FROM credit_operations WHERE kind = 'grant'`); err != nil {
		t.Fatal(err)
	}
	if reason != "proration of "+x.ID+": "+pro.ID+" to "+basic.ID {
		t.Fatalf("grant reason %q", reason)
	}
}

// A plan migration counts the plan's live subscribers and sums one period
// before and after; preview schedules nothing; the migration schedules a
// period_end change on each, and the renewal moves them.
func TestPlanMigration(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	pro, basic := f.planPair()
	var subs []*client.Subscription
	for _, u := range []string{"u_1", "u_2", "u_3"} {
		subs = append(subs, f.subscribe(pro.ID, rail.WalletSucceeds, u))
	}
	pv, err := f.c.MigratePlan(f.ctx, pro.ID, client.MigrateParams{To: basic.ID, Preview: true})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Object != "plan_migration" || pv.Subscriptions != 3 || pv.AmountBefore != "60000000" || pv.AmountAfter != "30000000" || pv.Effective != "period_end" {
		t.Fatalf("preview: %s", pv.Raw)
	}
	if got := f.sub(subs[0].ID); got.PendingPlanID != nil {
		t.Fatal("the preview scheduled a change")
	}
	m, err := f.c.MigratePlan(f.ctx, pro.ID, client.MigrateParams{To: basic.ID})
	if err != nil || m.Subscriptions != 3 {
		t.Fatalf("%v %+v", err, m)
	}
	if c := count(f.eventTypes(), "subscription.updated"); c != 3 {
		t.Fatalf("%d subscription.updated", c)
	}
	f.advance("32d")
	for _, x := range subs {
		if got := f.sub(x.ID); got.PlanID != basic.ID || *got.Amount != "10000000" {
			t.Fatalf("after the renewal: %s", got.Raw)
		}
	}
}

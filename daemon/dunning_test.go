package daemon_test

import (
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// A daily plan under the default dunning schedule (24h, 72h, 120h): two
// periods end while the renewal is past due. The retry that recovers it
// charges them at once, stamped with its own time, so the feed never goes
// back in time and every period is paid exactly once.
func TestDunningLongerThanPeriod(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	one := 1
	p := f.plan(client.PlanParams{Name: "Daily", Amount: "1000000", Interval: "custom", IntervalDays: &one})
	x := f.subscribe(p.ID, rail.WalletFailsTwiceAfter1, "u_daily")
	for i := 0; i < 4; i++ { // the renewal fails, the first retry fails, the second succeeds
		f.advance("24h")
	}
	f.advance("1h")
	got := f.sub(x.ID)
	if got.Status != "active" {
		t.Fatalf("after the recovering retry: %s", got.Raw)
	}
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The feed is newest first: each event is at or before the one above it.
	for i := 1; i < len(page.Data); i++ {
		if newer, older := page.Data[i-1], page.Data[i]; newer.CreatedAt.Before(older.CreatedAt) {
			t.Fatalf("%s %s at %s is listed after %s %s at %s", newer.Type, newer.ID, newer.CreatedAt, older.Type, older.ID, older.CreatedAt)
		}
	}
	pays, err := f.c.ListPayments(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The first payment and one per period that started since: days 1 to 4.
	seen := map[string]bool{}
	for _, pay := range pays.Data {
		if pay.PeriodStart == nil {
			t.Fatalf("payment %s has no period", pay.ID)
		}
		k := pay.PeriodStart.UTC().String()
		if seen[k] {
			t.Fatalf("period starting %s paid twice", k)
		}
		seen[k] = true
	}
	if len(pays.Data) != 5 {
		t.Fatalf("%d payments, want 5 (the first and days 1 to 4)", len(pays.Data))
	}
	if !got.CurrentPeriodStart.Equal(x.CurrentPeriodStart.AddDate(0, 0, 4)) {
		t.Fatalf("current period starts %s, want %s", got.CurrentPeriodStart, x.CurrentPeriodStart.AddDate(0, 0, 4))
	}
}

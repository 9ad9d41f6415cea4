package daemon_test

import (
	"sort"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// feed returns every event of f's merchant, oldest first, walking the list
// with before = next_cursor.
func (f *moneyFixture) feed() []client.Event {
	f.t.Helper()
	var out []client.Event
	p := client.ListParams{Limit: 100}
	for {
		page, err := f.c.ListEvents(f.ctx, p)
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, page.Data...)
		if !page.HasMore {
			break
		}
		p.Before = page.NextCursor
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// One advance over a monthly subscription set to end with its period and a
// weekly one runs every step of both in time order, each event stamped with
// the time its step fell due.
func TestClockAdvanceRunsEveryStepInTimeOrder(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	monthly := f.plan(client.PlanParams{Name: "Monthly", Amount: "2000000", Interval: "month"})
	weekly := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	m := f.subscribe(monthly.ID, rail.WalletSucceeds, "u_monthly")
	w := f.subscribe(weekly.ID, rail.WalletSucceeds, "u_weekly")
	if _, err := f.c.CancelSubscription(f.ctx, m.ID, client.CancelParams{}); err != nil {
		t.Fatal(err)
	}
	clock, err := f.c.GetTestClock(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.advance("40d")

	type step struct {
		typ string
		at  time.Time
	}
	want := []step{{"subscription.expired", *m.CurrentPeriodEnd}}
	end := clock.Now.Add(40 * 24 * time.Hour)
	for at := *w.CurrentPeriodEnd; !at.After(end); at = at.Add(7 * 24 * time.Hour) {
		want = append(want, step{"subscription.renewed", at})
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].at.Before(want[j].at) })

	var got []step
	var last time.Time
	for _, e := range f.feed() {
		if e.CreatedAt.Before(last) {
			t.Errorf("%s %s at %s comes after an event at %s", e.ID, e.Type, e.CreatedAt, last)
		}
		last = e.CreatedAt
		if e.Type == "subscription.renewed" || e.Type == "subscription.expired" {
			got = append(got, step{e.Type, e.CreatedAt})
		}
	}
	if len(got) != len(want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	// Emitted in that order too (webhook deliveries follow it).
	var emitted []struct {
		Type string    `db:"type"`
		At   time.Time `db:"occurred_at"`
	}
	if err := f.db.SelectContext(f.ctx, &emitted, `SELECT type, occurred_at FROM events WHERE merchant_id = $1 ORDER BY seq`, f.m); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(emitted); i++ {
		if emitted[i].At.Before(emitted[i-1].At) {
			t.Fatalf("emitted %s at %s after %s at %s", emitted[i].Type, emitted[i].At, emitted[i-1].Type, emitted[i-1].At)
		}
	}
	for i := range want {
		if got[i].typ != want[i].typ || !got[i].at.Equal(want[i].at) {
			t.Fatalf("step %d: %s at %s, want %s at %s (all: %v)", i, got[i].typ, got[i].at, want[i].typ, want[i].at, got)
		}
	}
}

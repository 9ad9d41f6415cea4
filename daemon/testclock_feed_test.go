package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// In test mode the feed is read by the times it shows: `after`, `before`
// and next_cursor are clock times, as the events' created_at are.
func TestEventCursorsFollowTheTestClock(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	weekly := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	f.subscribe(weekly.ID, rail.WalletSucceeds, "u_weekly")
	f.advance("40d")
	all := f.feed()
	var renewals []client.Event
	for _, e := range all {
		if e.Type == "subscription.renewed" {
			renewals = append(renewals, e)
		}
	}
	if len(renewals) != 5 {
		t.Fatalf("%d renewals in %d events", len(renewals), len(all))
	}
	// A date-time between the second and third renewals.
	mid := renewals[1].CreatedAt.Add(time.Hour)
	var later, earlier []string
	for _, e := range all {
		if e.CreatedAt.Before(mid) {
			earlier = append(earlier, e.ID)
		} else {
			later = append(later, e.ID)
		}
	}
	// after=mid, oldest first, walked two at a time with next_cursor.
	eventually(t, 10*time.Second, "the events after "+mid.String(), func() bool {
		var got []string
		after := mid.Format(time.RFC3339Nano)
		for range 10 {
			page, err := f.c.ListEventsAfter(f.ctx, clientAfter(after, 2))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Data {
				got = append(got, e.ID)
			}
			if !page.HasMore {
				break
			}
			after = page.NextCursor
		}
		return fmt.Sprint(got) == fmt.Sprint(later)
	})
	// The same by event id: after the second renewal.
	page, err := f.c.ListEventsAfter(f.ctx, clientAfter(renewals[1].ID, 100))
	if err != nil || len(page.Data) != len(later) || page.Data[0].ID != later[0] {
		t.Fatalf("after %s: %v %v, want %v", renewals[1].ID, page, err, later)
	}
	// before=mid, newest first, walked two at a time with next_cursor.
	var got []string
	p := client.ListParams{Limit: 2, Before: mid.Format(time.RFC3339Nano)}
	for {
		page, err := f.c.ListEvents(f.ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			got = append([]string{e.ID}, got...)
			if !e.CreatedAt.Before(mid) {
				t.Fatalf("before %s: %s at %s", mid, e.ID, e.CreatedAt)
			}
		}
		if !page.HasMore {
			break
		}
		if c, err := time.Parse(time.RFC3339Nano, page.NextCursor); err != nil || !c.Truncate(time.Microsecond).Equal(page.Data[len(page.Data)-1].CreatedAt.Truncate(time.Microsecond)) {
			t.Fatalf("next_cursor %s is not the last event's created_at %s", page.NextCursor, page.Data[len(page.Data)-1].CreatedAt)
		}
		p.Before = page.NextCursor
	}
	if fmt.Sprint(got) != fmt.Sprint(earlier) {
		t.Fatalf("before %s: %v, want %v", mid, got, earlier)
	}
}

// Customers are stamped by the test clock, whichever way they are created.
func TestCustomersFollowTheTestClock(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	f.advance("10d")
	clock, err := f.c.GetTestClock(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	weekly := f.plan(client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	f.subscribe(weekly.ID, rail.WalletSucceeds, "u_checkout")
	if _, err := f.c.GrantCredits(f.ctx, client.CreditGrantParams{Amount: "100", ExternalCustomerID: "u_credits"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.CreateMeter(f.ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.SendMeterEvent(f.ctx, client.MeterEventParams{EventName: "calls", ExternalCustomerID: "u_usage"}); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"u_checkout", "u_credits", "u_usage"} {
		c, err := f.c.GetCustomer(f.ctx, ext)
		if err != nil {
			t.Fatal(err)
		}
		if c.CreatedAt.Before(clock.Now.Add(-time.Second)) {
			t.Errorf("%s created at %s, before the clock's %s", ext, c.CreatedAt, clock.Now)
		}
	}
}

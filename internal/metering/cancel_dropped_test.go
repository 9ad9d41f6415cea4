package metering

import (
	"context"
	"testing"
	"time"
)

// A cancel rebuilds its day from the day's hours, not from the events: once
// the rows of the day's earlier hours are gone (retention drops whole weeks,
// the test below deletes them), the day still holds their usage.
func TestCancelKeepsTheDayOfDroppedHours(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	g := NewIngester()
	early, late := time.Date(2026, 7, 14, 2, 0, 0, 0, time.UTC), time.Date(2026, 7, 14, 20, 0, 0, 0, time.UTC)
	// Per aggregation, the day after the drop and the cancel: the early
	// hour's 9 and 4 (rows dropped, kept by their hour), the late 7, and
	// the cancelled 50 counted nowhere.
	want := map[string]string{Sum: "20", Count: "3", Max: "9", Last: "7"}
	for agg, w := range want {
		if _, _, err := Create(ctx, db, s, Input{Key: "d_" + agg, DisplayName: agg, Aggregation: agg}, now.Add(-40*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		ingestAt(t, g, db, s, "d_"+agg, cust, 9, early, now)
		ingestAt(t, g, db, s, "d_"+agg, cust, 4, early.Add(time.Minute), now)
		ingestAt(t, g, db, s, "d_"+agg, cust, 7, late, now)
		gone := ingestAt(t, g, db, s, "d_"+agg, cust, 50, late.Add(time.Minute), now)
		if _, err := db.ExecContext(ctx, `DELETE FROM meter_events WHERE merchant_id = $1 AND event_timestamp < $2`, s.MerchantID, early.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := Cancel(ctx, db, s, gone.ID, now); err != nil {
			t.Fatal(err)
		}
		from, to := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)
		u, err := Usage(ctx, db, s, cust, UsageInput{Meter: "d_" + agg, From: &from, To: &to, Window: Day}, now)
		if err != nil {
			t.Fatal(err)
		}
		if u.Value != w {
			t.Errorf("%s: the day holds %s after the drop and the cancel, want %s", agg, u.Value, w)
		}
	}
}

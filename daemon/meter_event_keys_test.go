package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// Idempotency keys are kept 35 days: pruning removes only older ones, and
// refuses a cutoff that would break that promise.
func TestPruneMeterEventKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	ctx := context.Background()
	if _, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old", "new"} {
		if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.db.Exec(`UPDATE meter_event_keys SET created_at = now() - interval '40 days' WHERE idempotency_key = 'old'`); err != nil {
		t.Fatal(err)
	}
	if _, err := metering.PruneKeys(ctx, b.db, time.Now().Add(-24*time.Hour), time.Now()); err == nil {
		t.Fatal("a cutoff inside the 35 days was accepted")
	}
	n, err := metering.PruneKeys(ctx, b.db, time.Now().Add(-metering.MaxAge-time.Hour), time.Now())
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	// The recent key still deduplicates.
	again, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: "new"})
	if err != nil || !again.Deduplicated {
		t.Fatalf("recent key lost: %+v %v", again, err)
	}
}

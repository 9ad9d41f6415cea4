package metering

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// A batch skips the windows of a scope that has none; one that arrives
// while the scope's first window is being made waits for it and counts in
// it.
func TestBatchDuringFirstWindowCountsInIt(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	since := now.Add(-24 * time.Hour)
	g := NewIngester()
	m, _, err := Create(ctx, db, s, Input{Key: "first", DisplayName: "first", Aggregation: Sum}, now.Add(-40*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ingestAt(t, g, db, s, m.Key, cust, 5, now.Add(-time.Hour), now)
	started, release, tracked := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		tracked <- db.InTx(ctx, func(tx *store.Tx) error {
			err := TrackWindow(ctx, tx, s, cust, m.ID, "feat_first", since)
			close(started)
			<-release
			return err
		})
	}()
	<-started
	ingested := make(chan error, 1)
	go func() {
		v, at := int64(7), now.Add(-time.Minute)
		res, err := g.Ingest(ctx, db, s, []EventInput{{EventName: m.Key, Value: &v, CustomerID: &cust, Timestamp: &at}}, now)
		if err == nil {
			err = res[0].Err
		}
		ingested <- err
	}()
	select {
	case err := <-ingested:
		t.Fatalf("the batch did not wait for the window (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-tracked; err != nil {
		t.Fatal(err)
	}
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
	var w Window
	if err := db.GetContext(ctx, &w, `SELECT since, event_count, value_sum, value_max, last_value, last_at FROM usage_windows
		WHERE merchant_id = $1 AND owner = 'feat_first'`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if w.Count != 2 || w.Sum != "12" {
		t.Errorf("window holds %d events summing to %s, want 2 and 12", w.Count, w.Sum)
	}
}

package webhooks

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestRemoveKeepsHistory: no foreign key ties deliveries to their endpoint
// or attempts to their delivery, so what those held is checked here.
// Removing an endpoint keeps its row, its deliveries and their attempts,
// fails its pending deliveries, and no later event is delivered to it nor
// retried to it; deliveries of an event named by its id alone are found by
// its merchant.
func TestRemoveKeepsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_rm', 'rm')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_rm', 'test', 'we_rm', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data) VALUES ('mer_rm', 'test', 'evt_rm1', 'invoice.created', '{}'),
			('mer_rm', 'test', 'evt_rm2', 'invoice.created', '{}')`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, status, attempts) VALUES
			('mer_rm', 'test', 'dlv_rm_done', 'evt_rm1', 'we_rm', 'succeeded', 1),
			('mer_rm', 'test', 'dlv_rm_wait', 'evt_rm2', 'we_rm', 'pending', 1)`,
		`INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, status, latency_us) VALUES
			('mer_rm', 'test', 'dlv_rm_done', 1, now(), 200, 10), ('mer_rm', 'test', 'dlv_rm_wait', 1, now(), 500, 10)`,
	)
	if ds, err := ListDeliveries(ctx, db, Filter{EventID: "evt_rm2"}); err != nil || len(ds) != 1 || ds[0].ID != "dlv_rm_wait" {
		t.Fatalf("deliveries of evt_rm2: %+v, %v", ds, err)
	}
	if err := Remove(ctx, db, "we_rm"); err != nil {
		t.Fatal(err)
	}
	var left struct {
		Endpoints int    `db:"endpoints"`
		Attempts  int    `db:"attempts"`
		Done      string `db:"done"`
		Wait      string `db:"wait"`
	}
	if err := db.GetContext(ctx, &left, `SELECT (SELECT count(*) FROM webhook_endpoints WHERE id = 'we_rm' AND removed_at IS NOT NULL) AS endpoints,
		(SELECT count(*) FROM webhook_attempts WHERE merchant_id = 'mer_rm') AS attempts,
		(SELECT status FROM webhook_deliveries WHERE id = 'dlv_rm_done') AS done,
		(SELECT status || ': ' || last_error FROM webhook_deliveries WHERE id = 'dlv_rm_wait') AS wait`); err != nil {
		t.Fatal(err)
	}
	if left.Endpoints != 1 || left.Attempts != 2 || left.Done != StatusSucceeded || left.Wait != "failed: endpoint removed" {
		t.Errorf("after removal: %+v", left)
	}
	if _, err := Retry(ctx, db, RetryInput{EventID: "evt_rm2"}); err == nil {
		t.Error("a delivery to a removed endpoint was retried")
	}
	var n int
	if err := db.GetContext(ctx, &n, `WITH ev AS (
			INSERT INTO events (merchant_id, mode, id, type, data) VALUES ('mer_rm', 'test', 'evt_rm3', 'invoice.created', '{}')
			RETURNING merchant_id, mode, id, type, created_at
		), `+events.DeliveriesOf("ev.merchant_id")+` SELECT count(*) FROM d`); err != nil || n != 0 {
		t.Errorf("deliveries made for an event after removal: %d, %v", n, err)
	}
}

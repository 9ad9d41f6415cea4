package webhooks

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestDeliveryIDsLeadWithTheirTime: each delivery an event makes gets an
// id of its own, "dlv_" and 32 hexadecimal digits whose first 12 are the
// writing transaction's start in milliseconds, so that the deliveries
// written together are neighbours in every index keyed by their id.
func TestDeliveryIDsLeadWithTheirTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_ids', 'ids')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES
			('mer_ids', 'test', 'we_ids_a', 'https://hooks.example.com/a', 's'),
			('mer_ids', 'test', 'we_ids_b', 'https://hooks.example.com/b', 's')`,
	)
	scope := tenant.Scope{MerchantID: "mer_ids", Mode: "test"}
	for range 3 {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var now time.Time
			if err := tx.GetContext(ctx, &now, `SELECT now()`); err != nil {
				return err
			}
			_, err := events.Emit(ctx, tx, scope, "invoice.created", now, map[string]string{"id": "inv_x"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var rows []struct {
		ID      string    `db:"id"`
		Created time.Time `db:"created_at"`
	}
	if err := db.SelectContext(ctx, &rows, `SELECT id, created_at FROM webhook_deliveries WHERE merchant_id = 'mer_ids'`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d deliveries, want 2 endpoints × 3 events", len(rows))
	}
	shape := regexp.MustCompile(`^dlv_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for _, r := range rows {
		if !shape.MatchString(r.ID) || seen[r.ID] {
			t.Fatalf("delivery id %q: want a new dlv_ and 32 hexadecimal digits", r.ID)
		}
		seen[r.ID] = true
		ms, _ := strconv.ParseInt(r.ID[4:16], 16, 64)
		// created_at defaults to now(), the same transaction start the id
		// names, rounded to the millisecond.
		if d := time.UnixMilli(ms).Sub(r.Created); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("delivery %s names %s, %s from the transaction that wrote it (%s)", r.ID, time.UnixMilli(ms).UTC(), d, r.Created)
		}
	}
}

package webhooks

import (
	"context"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestDueScanWalksTheIndexWhateverThePlannerThinks: with index reads
// priced high (stale statistics did as much in the shared harness, where
// every claim read the whole table), the plain scan reads every delivery,
// which the test asserts so that it can fail; dueSQL still walks the due
// index, and finds the due deliveries of endpoints with room, in order,
// but not those leased. Leasing them rewrites each row in place (HOT),
// with no new index entry.
func TestDueScanWalksTheIndexWhateverThePlannerThinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_due', 'due')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES
			('mer_due', 'test', 'we_due', 'https://hooks.example.com/a', 's'),
			('mer_due', 'test', 'we_full', 'https://hooks.example.com/b', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data)
			SELECT 'mer_due', 'test', 'evt_' || n, 'invoice.created', '{}' FROM generate_series(1, 5000) n`,
		// Answered deliveries, and a few still due (one of them in flight,
		// leased by a claim). Inserted as they are, not updated to it: a
		// concurrent transaction elsewhere could keep the dead versions an
		// update leaves from being pruned, and the leases below from
		// finding room on their pages.
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, next_attempt_at, status, leased_until)
			SELECT 'mer_due', 'test', 'dlv_' || n, 'evt_' || n, CASE WHEN n % 2 = 0 THEN 'we_full' ELSE 'we_due' END,
				now() - interval '1 hour' + n * interval '1 ms',
				CASE WHEN n IN (4001, 4002, 4003, 4005, 4999) THEN 'pending' ELSE 'succeeded' END,
				CASE WHEN n = 4005 THEN now() + interval '1 minute' END
			FROM generate_series(1, 5000) n`,
		`ANALYZE webhook_deliveries`,
	)
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL random_page_cost = 100000`); err != nil {
		t.Fatal(err)
	}
	full := pq.StringArray{"we_full"}

	// The scan as a plain statement, to show the planner is misled.
	var plan []string
	err = tx.SelectContext(ctx, &plan, `EXPLAIN SELECT d.merchant_id, d.id, d.endpoint_id FROM webhook_deliveries d
		WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND NOT (d.endpoint_id = ANY ($2::text[]))
			AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = d.merchant_id AND w.id = d.endpoint_id AND w.enabled)
		ORDER BY d.next_attempt_at LIMIT $1`, 256, full)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "Seq Scan on webhook_deliveries") {
		t.Fatalf("the setup no longer misleads the planner; the test shows nothing:\n%s", strings.Join(plan, "\n"))
	}

	// The transaction's scans of the table, counted as they run (with
	// whatever earlier ones of the connection are not yet reported, hence
	// the difference).
	type counts struct {
		Seq int64 `db:"seq_scan"`
		Idx int64 `db:"idx_scan"`
	}
	scans := func() (c counts) {
		t.Helper()
		err := tx.GetContext(ctx, &c, `SELECT seq_scan, coalesce(idx_scan, 0) AS idx_scan FROM pg_stat_xact_user_tables
			WHERE relname = 'webhook_deliveries' AND schemaname = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	before := scans()
	var got []struct {
		MerchantID string `db:"merchant_id"`
		ID         string `db:"id"`
		EndpointID string `db:"endpoint_id"`
	}
	if err := tx.SelectContext(ctx, &got, dueSQL, 256, full); err != nil {
		t.Fatal(err)
	}
	after := scans()
	if seq, idx := after.Seq-before.Seq, after.Idx-before.Idx; seq != 0 || idx == 0 {
		t.Errorf("dueSQL: %d sequential and %d index scans of webhook_deliveries, want 0 and some", seq, idx)
	}
	var ids []string
	for _, g := range got {
		ids = append(ids, g.ID)
	}
	if strings.Join(ids, ",") != "dlv_4001,dlv_4003,dlv_4999" {
		t.Fatalf("due: %v, want dlv_4001, dlv_4003, dlv_4999 (we_full skipped, dlv_4005 leased)", ids)
	}

	var upd struct {
		All int64 `db:"n_tup_upd"`
		HOT int64 `db:"n_tup_hot_upd"`
	}
	updates := func() {
		t.Helper()
		err := tx.GetContext(ctx, &upd, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
			WHERE relname = 'webhook_deliveries' AND schemaname = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
	}
	updates()
	all, hot := upd.All, upd.HOT
	var jobs []claimRow
	if err := tx.SelectContext(ctx, &jobs, claimSQL, "mer_due", pq.StringArray(ids), 15_000_000); err != nil {
		t.Fatal(err)
	}
	updates()
	if len(jobs) != 3 || upd.All-all != 3 || upd.HOT-hot != 3 {
		t.Errorf("leased %d; %d updates, %d of them HOT; want 3, 3, 3", len(jobs), upd.All-all, upd.HOT-hot)
	}
	if err := tx.SelectContext(ctx, &got, dueSQL, 256, full); err != nil || len(got) != 0 {
		t.Errorf("due after the lease: %v, %v; want none", got, err)
	}
}

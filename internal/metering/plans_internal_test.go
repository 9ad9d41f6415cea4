package metering

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestIngestPlansProbeByKey: on a merchant with many customers and usage
// windows, analysed as the daemon's statistics job leaves them, the
// generic plans of an ingestion's statements reach every table by an index
// probe on its key, never by a scan of the table or of the merchant's
// rows, so a request costs the same however much is stored. (Customers
// found by "id in the list OR external id in the list" were read a
// merchant at a time: a one-event request took ~50 ms more per 100,000
// customers.)
func TestIngestPlansProbeByKey(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO customers (merchant_id, mode, id, external_customer_id)
			SELECT 'mer_' || g % 2, 'test', 'cus_' || g, 'ext' || g FROM generate_series(1, 20000) g`,
		`INSERT INTO usage_windows (merchant_id, mode, customer_id, meter_id, owner, since)
			SELECT 'mer_' || g % 2, 'test', 'cus_' || g, 'mtr_1', 'feat_1', now() FROM generate_series(1, 20000) g`,
		`ANALYZE customers, usage_windows`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tenantOnly := regexp.MustCompile(`Index Cond: \(\(?merchant_id = [^)]*\)?( AND \(mode = [^)]*\))?\)$`)
	for name, sql := range map[string]string{"customers": resolveCustomersSQL, "write": writeSQL, "write_new_keys": writeNewKeysSQL} {
		plan := testdb.GenericPlan(t, conn, name, sql)
		text := strings.Join(plan, "\n")
		for i, line := range plan {
			l := strings.TrimSpace(line)
			// Whether the scope has any active alert is asked once per
			// batch: the first entry found answers it.
			gate := i >= 2 && strings.Contains(plan[i-2], "InitPlan") && strings.Contains(plan[i-1], "on alerts")
			// Whether the scope has any usage window, likewise: the first
			// entry, in key order, answers it.
			gate = gate || i >= 3 && strings.Contains(plan[i-3], "InitPlan") && strings.Contains(plan[i-2], "Limit") &&
				strings.Contains(plan[i-1], "on usage_windows")
			// The scope is usage_rollups' whole key: one row.
			gate = gate || i >= 1 && strings.Contains(plan[i-1], "on usage_rollups")
			if strings.Contains(l, "Seq Scan") || strings.Contains(l, "Bitmap Heap Scan") || tenantOnly.MatchString(l) && !gate {
				t.Errorf("%s: %q in the generic plan:\n%s", name, l, text)
			}
		}
		if name == "customers" && (!strings.Contains(text, "(id = ANY ($3))") || !strings.Contains(text, "(external_customer_id = ANY ($4))")) {
			t.Errorf("customers: not probed by id and by external id:\n%s", text)
		}
	}
}

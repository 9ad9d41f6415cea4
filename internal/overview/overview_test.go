package overview

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var now = time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

// seed gives merchant payments of 1 USDC: one per hour over a year in
// live mode (so most are older than the window), plus subscriptions and
// failed-charge events.
func seed(t *testing.T, db *store.DB, merchant string) {
	exec(t, db, `INSERT INTO payments (merchant_id, mode, id, amount, status, created_at)
		SELECT $1, 'live', 'pay_' || $1 || g, 1000000, 'succeeded', $2::timestamptz - g * interval '1 hour'
		FROM generate_series(0, 365 * 24 - 1) g`, merchant, now)
	// Three a day in test mode, 89 of them in the window: never counted in
	// live.
	exec(t, db, `INSERT INTO payments (merchant_id, mode, id, amount, status, created_at)
		SELECT $1, 'test', 'pay_t' || $1 || g, 5000000, 'succeeded', $2::timestamptz - g * interval '8 hours'
		FROM generate_series(0, 89) g`, merchant, now)
	subs := []struct {
		status, interval string
		days             any
		usage            string
		amount           int64
		periodEnd        time.Time
		cancel           bool
	}{
		{"active", "month", nil, "licensed", 30_000000, now.Add(48 * time.Hour), false},       // due
		{"active", "year", nil, "licensed", 120_000000, now.Add(200 * 24 * time.Hour), false}, // 10/month
		{"active", "week", nil, "licensed", 3_000000, now.Add(24 * time.Hour), true},          // 13/month, set to cancel
		{"active", "custom", 73, "licensed", 2_400000, now.Add(10 * 24 * time.Hour), false},   // 365/73 = 5 periods a year: 1/month
		{"active", "month", nil, "metered", 50_000000, now.Add(24 * time.Hour), false},        // due; no MRR
		{"past_due", "month", nil, "licensed", 9_000000, now.Add(-24 * time.Hour), false},
		{"canceled", "month", nil, "licensed", 7_000000, now.Add(24 * time.Hour), false},
	}
	for i, s := range subs {
		var cancel any
		if s.cancel {
			cancel = s.periodEnd
		}
		exec(t, db, `INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, amount, interval, interval_days, usage_type,
			current_period_end, cancel_at, meter_id) VALUES ($1, 'live', $2, 'plan_x', $3, $4, $5, $6, $7, $8, $9, $10, NULL)`,
			merchant, fmt.Sprintf("sub_%s_%d", merchant, i), fmt.Sprintf("cus_%d", i), s.status, s.amount, s.interval, s.days, s.usage, s.periodEnd, cancel)
	}
	// Ended subscriptions and other events, which the overview must not read.
	exec(t, db, `INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, amount, interval, usage_type, current_period_end)
		SELECT $1, 'live', 'sub_old' || $1 || g, 'plan_x', 'cus_old' || g, 'canceled', 1000000, 'month', 'licensed', $2
		FROM generate_series(1, 3000) g`, merchant, now)
	exec(t, db, `INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
		SELECT $1, 'live', 'evt_paid' || $1 || g, 'invoice.paid', '{}', $2::timestamptz - g * interval '10 minutes', $2::timestamptz - g * interval '10 minutes'
		FROM generate_series(1, 5000) g`, merchant, now)
	for i, ago := range []time.Duration{time.Hour, 29 * 24 * time.Hour, 31 * 24 * time.Hour} {
		exec(t, db, `INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
			VALUES ($1, 'live', $2, 'subscription.payment_failed', '{}', $3, $3)`, merchant, fmt.Sprintf("evt_%s_%d", merchant, i), now.Add(-ago))
	}
}

func TestOverview(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t)
	a, _ := auth.CreateMerchant(ctx, db, "a")
	b, _ := auth.CreateMerchant(ctx, db, "b")
	seed(t, db, a.ID)
	seed(t, db, b.ID)
	o, err := Get(ctx, db, tenant.Scope{MerchantID: a.ID, Mode: tenant.Live}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Revenue) != Days || !o.Revenue[0].Date.Equal(time.Date(2026, 10, 29, 0, 0, 0, 0, time.UTC)) || !o.Revenue[Days-1].Date.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("days %v … %v", o.Revenue[0].Date, o.Revenue[len(o.Revenue)-1].Date)
	}
	// Today has the payments of 00:00 to 15:00 (16), every other day 24.
	if o.Revenue[Days-1].Revenue != 16_000000 || o.Revenue[3].Revenue != 24_000000 || o.Total != money.Amount((29*24+16)*1_000000) {
		t.Errorf("revenue: today %s, a day %s, total %s", o.Revenue[Days-1].Revenue, o.Revenue[3].Revenue, o.Total)
	}
	want := Overview{Active: 5, PastDue: 1, MRR: 30_000000 + 10_000000 + 13_000000 + 1_000000, FailedCharges: 2, RenewalsDue: 2}
	if o.Active != want.Active || o.PastDue != want.PastDue || o.MRR != want.MRR || o.FailedCharges != want.FailedCharges || o.RenewalsDue != want.RenewalsDue {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
	ot, err := Get(ctx, db, tenant.Scope{MerchantID: a.ID, Mode: tenant.Test}, now)
	if err != nil || ot.Total != 89*5_000000 || ot.Active != 0 || ot.FailedCharges != 0 {
		t.Errorf("test mode: %+v %v", ot, err)
	}
}

// The overview's statements read through indexes: their generic plans on
// an empty database, and their plans on a merchant with a year of payments,
// where the revenue reads only the window's rows.
func TestOverviewPlans(t *testing.T) {
	testdb.AssertIndexed(t, map[string]string{"revenue": revenueSQL, "subscriptions": subscriptionsSQL, "failed": failedSQL})
	ctx := context.Background()
	db := testdb.Open(t)
	a, _ := auth.CreateMerchant(ctx, db, "a")
	seed(t, db, a.ID)
	exec(t, db, `ANALYZE`)
	today := now.Truncate(24 * time.Hour)
	for _, c := range []struct {
		name, sql string
		args      []any
		index     string
		maxRows   int
	}{
		{"revenue", revenueSQL, []any{a.ID, "live", today.AddDate(0, 0, -29), today.AddDate(0, 0, 1)}, "payments_list", 30 * 24},
		{"subscriptions", subscriptionsSQL, []any{a.ID, "live", now.Add(RenewalWindow)}, "subscriptions_live", 6},
		{"failed", failedSQL, []any{a.ID, "live", now.AddDate(0, 0, -30)}, "events_payment_failed", 2},
	} {
		var lines []string
		if err := db.SelectContext(ctx, &lines, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `+c.sql, c.args...); err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		t.Logf("%s:\n%s", c.name, plan)
		if !strings.Contains(plan, c.index) {
			t.Errorf("%s: not through %s", c.name, c.index)
		}
		// The scan nodes return (and so read) no more rows than it counts;
		// the feed's months are read by index, but for empty ones, which
		// PostgreSQL reads whole (nothing) rather than through an index.
		var scanRows int
		for _, l := range lines {
			if strings.Contains(l, "Seq Scan") && !emptyTable(t, db, l) {
				t.Errorf("%s: %s", c.name, strings.TrimSpace(l))
			}
			if strings.Contains(l, "Index") && strings.Contains(l, "Scan") {
				var n int
				if _, err := fmt.Sscanf(l[strings.Index(l, "(actual rows="):], "(actual rows=%d", &n); err != nil {
					t.Fatalf("%s: %v in %q", c.name, err, l)
				}
				scanRows += n
			}
		}
		if scanRows == 0 || scanRows > c.maxRows {
			t.Errorf("%s: the scan returned %d rows, want 1 to %d", c.name, scanRows, c.maxRows)
		}
	}
}

// emptyTable reports whether the table a plan line "Seq Scan on TABLE ..."
// reads holds no rows.
func emptyTable(t *testing.T, db *store.DB, line string) bool {
	t.Helper()
	f := strings.Fields(line[strings.Index(line, "Seq Scan on ")+len("Seq Scan on "):])
	var empty bool
	if err := db.GetContext(context.Background(), &empty, `SELECT NOT EXISTS (SELECT 1 FROM `+pq.QuoteIdentifier(f[0])+`)`); err != nil {
		t.Fatal(err)
	}
	return empty
}

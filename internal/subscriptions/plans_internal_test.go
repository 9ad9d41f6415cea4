package subscriptions

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The billing engine's due scans read the rows due, not the rows stored:
// on two merchants with 20,000 subscriptions each, of which a few dozen
// are due (by the wall clock, in both modes, or only by a test clock
// running a day ahead), and thousands ended, each scan goes through a due
// index and reads (returns or filters out) no more subscriptions than it
// should find. No plan reads the table whole: neither the plans made for
// these arguments nor the generic ones a prepared statement may keep, on
// this database or on an empty one (a new daemon's).
func TestDueScansReadOnlyTheDueRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	wall := time.Now().UTC().Truncate(time.Second)
	stmts := []struct {
		name, sql string
		args      []any
		index     string
		rows      int // subscriptions the scan must find
	}{
		// 20 live and 10 test subscriptions of mer_a due by the wall clock
		// (the first branch), and mer_a's clock, which has some due (the
		// second: one probe, stopping at the first row).
		{"due_scopes", dueScopes, []any{500, wall}, "subscriptions_due", 30 + 1},
		// mer_a's test mode by its clock: 10 due by the wall, 15 more by
		// the clock a day ahead; not its 20 live ones.
		{"claim_due", claimDue, []any{500, "mer_a", "test", wall.Add(24 * time.Hour)}, "subscriptions_scope_due", 25},
		{"claim_scope", claimScope, []any{500, "mer_a", "test", wall.Add(24 * time.Hour)}, "subscriptions_scope_due", 25},
		{"next_due", nextDueSQL, nil, "subscriptions_due", 1},
	}
	// A new daemon prepares them on empty tables.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	noTableScan := func(when, name string, plan []string) {
		t.Helper()
		for _, l := range plan {
			if strings.Contains(l, "Seq Scan on subscriptions") || strings.Contains(l, "Bitmap Heap Scan on subscriptions") {
				t.Errorf("%s: %s: %s\n%s", name, when, strings.TrimSpace(l), strings.Join(plan, "\n"))
			}
		}
	}
	generic := func(when string) {
		t.Helper()
		for _, s := range stmts {
			if s.args != nil { // without parameters, the one plan is below
				noTableScan(when, s.name, testdb.GenericPlan(t, conn, s.name, s.sql))
			}
		}
	}
	generic("generic plan on empty tables")

	seedDue(t, db, wall)
	generic("generic plan")
	for _, s := range stmts {
		var lines []string
		if err := db.SelectContext(ctx, &lines, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `+s.sql, s.args...); err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		t.Logf("%s:\n%s", s.name, plan)
		noTableScan("plan", s.name, lines)
		if !strings.Contains(plan, s.index) {
			t.Errorf("%s: not through %s", s.name, s.index)
		}
		if read := rowsRead(t, lines); read != s.rows {
			t.Errorf("%s: read %d subscriptions, want the %d it finds", s.name, read, s.rows)
		}
	}
}

// seedDue writes mer_a's and mer_b's subscriptions (see
// TestDueScansReadOnlyTheDueRows) and mer_a's test clock, and analyses.
func seedDue(t *testing.T, db *store.DB, wall time.Time) {
	t.Helper()
	ins := func(merchant, mode, prefix string, n int, next string) {
		t.Helper()
		var due *string // NULL: ended, nothing due
		if next != "" {
			due = &next
		}
		_, err := db.Exec(`INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, usage_type, amount, interval,
				anchor, current_period_start, current_period_end, next_action_at)
			SELECT $1, $2, $3 || g, 'plan_x', 'cus_' || $3 || g, CASE WHEN $5::text IS NULL THEN 'canceled' ELSE 'active' END,
				'licensed', 1000000, 'week', $6, $6, $6::timestamptz + interval '7 days', $6::timestamptz + $5::interval
			FROM generate_series(1, $4) g`, merchant, mode, prefix, n, due, wall)
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"mer_a", "mer_b"} {
		if _, err := db.Exec(`INSERT INTO merchants (id, name) VALUES ($1, $1)`, m); err != nil {
			t.Fatal(err)
		}
		ins(m, "test", "sub_later_"+m+"_", 20_000, "30 days")
		ins(m, "test", "sub_ended_"+m+"_", 5_000, "")
	}
	ins("mer_a", "live", "sub_live_", 20, "-1 hour")
	ins("mer_a", "test", "sub_wall_", 10, "-1 hour")
	ins("mer_a", "test", "sub_clock_", 15, "12 hours")
	if _, err := db.Exec(`INSERT INTO test_clocks (merchant_id, ahead_us) VALUES ('mer_a', $1)`, (24 * time.Hour).Microseconds()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ANALYZE`); err != nil {
		t.Fatal(err)
	}
}

var actualRows = regexp.MustCompile(`actual rows=(\d+) loops=(\d+)`)

// rowsRead sums, over a plan's index scans of subscriptions, the rows each
// returned and those its filter removed.
func rowsRead(t *testing.T, lines []string) int {
	t.Helper()
	n, inScan := 0, false
	for _, l := range lines {
		switch {
		case strings.Contains(l, "Scan") && strings.Contains(l, " on subscriptions"):
			inScan = true
			m := actualRows.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("no row count in %q", l)
			}
			rows, _ := strconv.Atoi(m[1])
			loops, _ := strconv.Atoi(m[2])
			n += rows * loops
		case strings.Contains(l, "->") || strings.Contains(l, "Scan"):
			inScan = false
		case inScan && strings.Contains(l, "Rows Removed by Filter:"):
			var removed int
			if _, err := fmt.Sscanf(strings.TrimSpace(l), "Rows Removed by Filter: %d", &removed); err != nil {
				t.Fatalf("%v in %q", err, l)
			}
			n += removed
		}
	}
	return n
}

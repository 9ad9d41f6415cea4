package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
)

// tenantOnly matches an index condition that names only the tenant: such a
// probe walks every row of a merchant.
var tenantOnly = regexp.MustCompile(`Index Cond: \(\(?merchant_id = [^)]*\)?( AND \(mode = [^)]*\))?\)$`)

// AssertProbes checks the generic plans of hot statements (by name) on a
// fresh database whose tables have no statistics yet, as on a new install
// or in a benchmark's first minute: a generic plan made then is kept until
// the tables are analysed, and PostgreSQL breaks cost ties between indexes
// in favour of the most recently made one. Every table must be reached
// through an index probe on a key beyond merchant_id and mode (or a ctid),
// never by a scan of the table or of a merchant's rows.
func AssertProbes(t *testing.T, stmts map[string]string) {
	t.Helper()
	assertProbes(t, freshConn(t), "fresh", stmts)
}

// AssertProbesAsTablesFill is AssertProbes at three states of the tables:
// fresh; after the statements of fill wrote rows that were never analysed
// (the planner then prices each index by the table's size alone, and
// between an install's first rows and its first analysis, a few seconds
// under load, every generic plan is made so); and once the tables named in
// analyse are analysed (those fill made large: a table analysed with a row
// or two is rightly read whole).
func AssertProbesAsTablesFill(t *testing.T, stmts map[string]string, fill []string, analyse ...string) {
	t.Helper()
	conn := freshConn(t)
	assertProbes(t, conn, "fresh", stmts)
	for _, q := range fill {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	assertProbes(t, conn, "filled", stmts)
	for _, table := range analyse {
		if _, err := conn.ExecContext(context.Background(), `ANALYZE `+table); err != nil {
			t.Fatal(err)
		}
	}
	assertProbes(t, conn, "analysed", stmts)
}

func assertProbes(t *testing.T, conn *sql.Conn, stage string, stmts map[string]string) {
	t.Helper()
	for name, sql := range stmts {
		t.Run(stage+"/"+name, func(t *testing.T) {
			plan := GenericPlan(t, conn, name, sql)
			text := strings.Join(plan, "\n")
			for _, line := range plan {
				l := strings.TrimSpace(line)
				if strings.Contains(l, "Seq Scan") || strings.Contains(l, "Bitmap Heap Scan") || tenantOnly.MatchString(l) {
					t.Errorf("%s: %q in the generic plan:\n%s", name, l, text)
				}
			}
			if !strings.Contains(text, "Index") {
				t.Errorf("%s: no index probe in the generic plan:\n%s", name, text)
			}
		})
	}
}

// freshConn is a connection to a new migrated database whose tables have
// no statistics yet, closed when the test ends.
func freshConn(t *testing.T) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, New(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); db.Close() })
	return conn
}

// GenericPlan returns the lines of the generic plan PostgreSQL makes for
// query (prepared as name on conn) as the tables stand now. EXPLAIN only
// plans: nothing is locked or written.
func GenericPlan(t *testing.T, conn *sql.Conn, name, query string) []string {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`SET plan_cache_mode = force_generic_plan`, `PREPARE ` + name + ` AS ` + query} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if _, err := conn.ExecContext(ctx, `DEALLOCATE `+name+`; RESET plan_cache_mode`); err != nil {
			t.Fatal(err)
		}
	}()
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(`EXPLAIN EXECUTE %s(%s)`, name, strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

package testdb

import (
	"strings"
	"testing"
)

// AssertIndexed checks, more loosely than AssertProbes, that the generic
// plans of statements (by name) made on a fresh database reach every table
// through an index: no sequential scan, no bitmap scan, no hash join.
// It is for statements that may also probe by tenant (a merchant's webhook
// endpoints, say).
func AssertIndexed(t *testing.T, stmts map[string]string) {
	t.Helper()
	conn := freshConn(t)
	for name, sql := range stmts {
		plan := strings.Join(GenericPlan(t, conn, name, sql), "\n")
		for _, bad := range []string{"Seq Scan", "Bitmap", "Hash Join"} {
			if strings.Contains(plan, bad) {
				t.Errorf("%s: %s in the generic plan:\n%s", name, bad, plan)
			}
		}
	}
}

package testdb

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
)

// AssertIndexed checks, more loosely than AssertProbes, that the generic
// plans of statements (by name) made on a fresh database reach every table
// through an index: no sequential scan, no bitmap scan, no hash join.
// It is for statements that may also probe by tenant (a merchant's webhook
// endpoints, say).
func AssertIndexed(t *testing.T, stmts map[string]string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for name, sql := range stmts {
		plan := strings.Join(GenericPlan(t, conn, name, sql), "\n")
		for _, bad := range []string{"Seq Scan", "Bitmap", "Hash Join"} {
			if strings.Contains(plan, bad) {
				t.Errorf("%s: %s in the generic plan:\n%s", name, bad, plan)
			}
		}
	}
}

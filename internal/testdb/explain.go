package testdb

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
)

// recorder is a Querier that remembers the statement of its last select.
type recorder struct {
	store.Querier
	query string
	args  []any
}

func (r *recorder) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	r.query, r.args = query, args
	return r.Querier.SelectContext(ctx, dest, query, args...)
}

// ReadPlan runs read against db, then returns the plan PostgreSQL makes for
// the statement of read's last select with the same arguments: the
// statement a domain function really sends, not a copy of it.
func ReadPlan(t *testing.T, db *store.DB, read func(store.Querier) error) string {
	t.Helper()
	return explainRead(t, db, `EXPLAIN `, read)
}

// RunPlan is ReadPlan with the statement run under EXPLAIN ANALYZE (costs
// and timings left out): the plan with the rows each node really read.
func RunPlan(t *testing.T, db *store.DB, read func(store.Querier) error) string {
	t.Helper()
	return explainRead(t, db, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `, read)
}

// explainRead runs read, then explain (an EXPLAIN with its options) of its
// last select with the same arguments.
func explainRead(t *testing.T, db *store.DB, explain string, read func(store.Querier) error) string {
	t.Helper()
	r := &recorder{Querier: db}
	if err := read(r); err != nil {
		t.Fatal(err)
	}
	if r.query == "" {
		t.Fatal("the read made no select")
	}
	var lines []string
	if err := db.SelectContext(context.Background(), &lines, explain+r.query, r.args...); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

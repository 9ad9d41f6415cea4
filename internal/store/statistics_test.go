package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A table written before it has statistics has its key lookups planned on
// the newest index that starts with merchant_id (a walk of the merchant's
// rows); AnalyzeFresh analyses it, and the same lookup then probes the key.
func TestAnalyzeFreshPlansKeyLookups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	for _, q := range []string{
		`CREATE TABLE things (merchant_id text, mode text, id text, created_at timestamptz DEFAULT now(), PRIMARY KEY (merchant_id, id))
			WITH (autovacuum_enabled = false)`, // only AnalyzeFresh analyses it
		`CREATE INDEX things_list ON things (merchant_id, mode, created_at DESC)`,
		`INSERT INTO things (merchant_id, mode, id) SELECT 'mch_1', 'test', 'thg_' || i FROM generate_series(1, 2000) i`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	plan := func() string {
		t.Helper()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return strings.Join(testdb.GenericPlan(t, conn, "get", `SELECT * FROM things WHERE merchant_id = $1 AND mode = $2 AND id = $3`), "\n")
	}
	if p := plan(); !strings.Contains(p, "things_list") {
		t.Fatalf("without statistics the lookup was expected on things_list (the tie this guards against):\n%s", p)
	}
	// The writes reach the statistics views shortly after they commit.
	var got []string
	for deadline := time.Now().Add(30 * time.Second); !slices.Contains(got, "things"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("AnalyzeFresh never analysed things (last: %v)", got)
		}
		var err error
		if got, err = store.AnalyzeFresh(ctx, db, 100); err != nil {
			t.Fatal(err)
		}
	}
	if p := plan(); !strings.Contains(p, "things_pkey") {
		t.Errorf("after AnalyzeFresh the lookup does not probe the key:\n%s", p)
	}
	// Analysed once: left to autovacuum from then on.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		again, err := store.AnalyzeFresh(ctx, db, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(again, "things") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("AnalyzeFresh keeps analysing things")
		}
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
)

// InTxGenericPlans plans its transaction's statements generically, and
// only its own: the setting ends with the transaction, on a connection the
// pool then hands to others.
func TestInTxGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	db.SetMaxOpenConns(1)
	mode := func(run func(context.Context, func(*store.Tx) error) error) string {
		var m string
		if err := run(ctx, func(tx *store.Tx) error { return tx.GetContext(ctx, &m, `SHOW plan_cache_mode`) }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := mode(db.InTxGenericPlans); m != "force_generic_plan" {
		t.Fatalf("in InTxGenericPlans: %s", m)
	}
	if m := mode(db.InTx); m != "auto" {
		t.Fatalf("in InTx after it, on the same connection: %s", m)
	}
	var m string
	if err := db.GetContext(ctx, &m, `SHOW plan_cache_mode`); err != nil || m != "auto" {
		t.Fatalf("on the pool: %s %v", m, err)
	}
}

package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
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

// A GenericPlans pool plans every statement generically, leaves db's
// sessions as they were, and shares db's wake-ups: closing it stops
// neither.
func TestGenericPlansPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	g, err := db.GenericPlans(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if g == db {
		t.Fatal("GenericPlans returned the pool itself, for a pool with a URL")
	}
	var m string
	if err := g.GetContext(ctx, &m, `SHOW plan_cache_mode`); err != nil || m != "force_generic_plan" {
		t.Fatalf("on the generic pool: %s %v", m, err)
	}
	if err := db.GetContext(ctx, &m, `SHOW plan_cache_mode`); err != nil || m != "auto" {
		t.Fatalf("on the pool: %s %v", m, err)
	}
	woken := make(chan struct{}, 1)
	unsubscribe := db.Subscribe("generic_plans_test", func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	db.Notify("generic_plans_test")
	select {
	case <-woken:
	default:
		t.Fatal("no wake-up after the generic pool closed")
	}
	if err := db.GetContext(ctx, &m, `SELECT 'still open'`); err != nil {
		t.Fatalf("the pool after the generic one closed: %v", err)
	}
}

// On a GenericPlans pool, InTxGenericPlans sends no SET LOCAL: its
// sessions already plan generically, and the setting would cost the
// transaction a round trip.
func TestInTxGenericPlansOnGenericPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var sent []string
	db := testdb.OpenConfig(t, store.Config{Trace: func(q string) {
		mu.Lock()
		sent = append(sent, q)
		mu.Unlock()
	}})
	g, err := db.GenericPlans(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var m string
	if err := g.InTxGenericPlans(ctx, func(tx *store.Tx) error { return tx.GetContext(ctx, &m, `SHOW plan_cache_mode`) }); err != nil {
		t.Fatal(err)
	}
	if m != "force_generic_plan" {
		t.Fatalf("in InTxGenericPlans on the generic pool: %s", m)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range sent {
		if strings.Contains(q, "SET LOCAL") {
			t.Fatalf("sent %q on a pool that plans generically already", q)
		}
	}
}

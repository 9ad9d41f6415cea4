package invoices

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func openScope(t *testing.T) (context.Context, *store.DB, tenant.Scope) {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return ctx, db, tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
}

func input(i int) Input {
	memo, due := fmt.Sprintf("memo %d ✓", i), time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC).Add(time.Duration(i)*time.Hour)
	in := Input{Amount: money.Amount(1000 + i), Description: fmt.Sprintf("invoice %d", i)}
	if i%2 == 0 {
		in.Memo, in.DueAt = &memo, &due
	}
	return in
}

// Concurrent creates are batched, and each caller gets exactly the invoice
// it asked for, as the one-by-one Create would have stored it.
func TestCreatesConcurrent(t *testing.T) {
	t.Parallel()
	ctx, db, s := openScope(t)
	creates := NewCreates(db)
	const n = 200
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	got := make([]Invoice, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inv, err := creates.Create(ctx, s, input(i), now.Add(time.Duration(i)*time.Microsecond))
			if err != nil {
				t.Errorf("create %d: %v", i, err)
			}
			got[i] = inv
		}()
	}
	wg.Wait()
	alone, err := Create(ctx, db, s, input(0), now)
	if err != nil {
		t.Fatal(err)
	}
	for i, inv := range got {
		in := input(i)
		stored, err := ByID(ctx, db, s, inv.ID)
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if !sameInvoice(inv, stored) || inv.Amount != in.Amount || inv.Description != in.Description || inv.Status != StatusOpen ||
			!inv.CreatedAt.Equal(now.Add(time.Duration(i)*time.Microsecond)) || (in.Memo == nil) != (inv.Memo == nil) ||
			(in.DueAt != nil && !inv.DueAt.Equal(*in.DueAt)) || inv.InvoiceNumber != nil || inv.Payee != nil {
			t.Fatalf("create %d returned %+v, stored %+v, asked %+v", i, inv, stored, in)
		}
		if i == 0 && (*inv.Memo != *alone.Memo || !inv.DueAt.Equal(*alone.DueAt)) {
			t.Fatalf("batched %+v, alone %+v", inv, alone)
		}
	}
	res, err := List(ctx, db, s, page.Params{Limit: 100})
	if err != nil || len(res.Items) != 100 {
		t.Fatalf("list: %d, %v", len(res.Items), err)
	}
}

func sameInvoice(a, b Invoice) bool {
	return a.ID == b.ID && a.Seq == b.Seq && a.Amount == b.Amount && a.CreatedAt.Equal(b.CreatedAt)
}

// A batch whose statement fails creates each invoice alone: the failure is
// only the failing invoice's, and every other one is stored once.
func TestCreatesBatchFailureIsPerInvoice(t *testing.T) {
	t.Parallel()
	ctx, db, s := openScope(t)
	creates := NewCreates(db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var calls []*batch.Call[createCall, createResult]
	for i := range 5 {
		in := input(i)
		if i == 2 {
			in.Description = "nul \x00 byte" // the decoder rejects it; here it reaches PostgreSQL
		}
		calls = append(calls, &batch.Call[createCall, createResult]{In: createCall{ctx: ctx, scope: s, in: in, now: now, id: id.New("inv")}})
	}
	creates.run(calls)
	for i, c := range calls {
		if i == 2 {
			if _, ok := apperr.As(c.Out.err); c.Out.err == nil || !ok && !strings.Contains(c.Out.err.Error(), "0x00") {
				t.Fatalf("the invalid invoice: %+v", c.Out)
			}
			continue
		}
		if c.Out.err != nil || c.Out.inv.ID != c.In.id || c.Out.inv.Description != c.In.in.Description {
			t.Fatalf("call %d: %+v", i, c.Out)
		}
	}
	// A clean batch is one statement: its seqs are consecutive, in the
	// callers' order.
	clean := []*batch.Call[createCall, createResult]{}
	for i := range 3 {
		clean = append(clean, &batch.Call[createCall, createResult]{In: createCall{ctx: ctx, scope: s, in: input(10 + i), now: now, id: id.New("inv")}})
	}
	creates.run(clean)
	for i, c := range clean {
		if c.Out.err != nil || c.Out.inv.ID != c.In.id || c.Out.inv.Seq != clean[0].Out.inv.Seq+int64(i) {
			t.Fatalf("clean call %d: %+v", i, c.Out)
		}
	}
	res, err := List(ctx, db, s, page.Params{Limit: 100})
	if err != nil || len(res.Items) != 7 {
		t.Fatalf("list: %d invoices, %v; want 7", len(res.Items), err)
	}
}

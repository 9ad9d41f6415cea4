package customers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The list walks one merchant's customers of one mode, newest first, by
// the cursor, each once (customers made in the same instant included),
// through its index: no sort of a merchant's customers and no scan, among
// thousands of another merchant's and of the other mode.
func TestListPagesNewestFirstByIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	var ms []string
	for _, name := range []string{"a", "b"} {
		m, err := auth.CreateMerchant(ctx, db, name)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m.ID)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// 12 test customers of a, three to an instant; 3000 live ones of a
	// and 3000 test ones of b.
	for _, q := range []struct {
		merchant, mode string
		n, per         int
	}{{ms[0], "test", 12, 3}, {ms[0], "live", 3000, 1}, {ms[1], "test", 3000, 1}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO customers (merchant_id, mode, id, created_at)
			SELECT $1, $2, 'cus_' || $2 || $1 || g, $4::timestamptz + (g / $5) * interval '1 minute' FROM generate_series(1, $3) g`,
			q.merchant, q.mode, q.n, at, q.per); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `ANALYZE customers`); err != nil {
		t.Fatal(err)
	}
	s := tenant.Scope{MerchantID: ms[0], Mode: tenant.Test}
	seen := map[string]bool{}
	var last *customers.Customer
	p := page.Params{Limit: 5}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the cursor does not end")
		}
		res, err := customers.List(ctx, db, s, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Items {
			if c.MerchantID != s.MerchantID || c.Mode != s.Mode || seen[c.ID] {
				t.Fatalf("%+v: another's, or twice", c)
			}
			if last != nil && (c.CreatedAt.After(last.CreatedAt) || c.CreatedAt.Equal(last.CreatedAt) && c.Seq >= last.Seq) {
				t.Fatalf("%s after %s: not newest first", c.ID, last.ID)
			}
			seen[c.ID], last = true, &c
		}
		if res.Next == nil {
			break
		}
		p.Before = res.Next
	}
	if len(seen) != 12 {
		t.Fatalf("%d customers listed, want 12", len(seen))
	}
	plan := testdb.ReadPlan(t, db, func(q store.Querier) error {
		_, err := customers.List(ctx, q, s, page.Params{Limit: 25, Before: &page.Cursor{At: at.Add(time.Hour), Seq: 1 << 40}})
		return err
	})
	if !strings.Contains(plan, "customers_list_test") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the list does not walk its index:\n%s", plan)
	}
	// The first page of each mode seeks to that mode's customers: its index
	// reads the page and the one row past it (has_more), and nothing is
	// read and filtered out, though a's 3000 live customers are newer than
	// its test ones.
	for _, mode := range []tenant.Mode{tenant.Test, tenant.Live} {
		s := tenant.Scope{MerchantID: ms[0], Mode: mode}
		plan := testdb.RunPlan(t, db, func(q store.Querier) error {
			_, err := customers.List(ctx, q, s, page.Params{Limit: 5})
			return err
		})
		if !strings.Contains(plan, "Index Scan using customers_list_"+string(mode)+" ") || !strings.Contains(plan, "(actual rows=6 loops=1)") ||
			strings.Contains(plan, "Rows Removed by Filter") || strings.Contains(plan, "Sort") {
			t.Errorf("%s mode's first page does not seek to its rows:\n%s", mode, plan)
		}
	}
}

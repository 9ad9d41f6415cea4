package payments_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A subscription's payments, newest first by the cursor, each once, read
// through their own index: not a walk of the merchant's other payments.
func TestListForSubscriptionByIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// 7 charges of sub_a (two to an hour), 3000 of other subscriptions
	// and invoices, and sub_a's id in live mode.
	if _, err := db.ExecContext(ctx, `INSERT INTO payments (merchant_id, mode, id, subscription_id, amount, status, created_at)
		SELECT $1, CASE WHEN g > 7 AND g % 100 = 0 THEN 'live' ELSE 'test' END, 'pay_' || g,
			CASE WHEN g <= 7 OR g % 100 = 0 THEN 'sub_a' WHEN g % 2 = 0 THEN 'sub_' || g END, 1000000, 'succeeded',
			$2::timestamptz + (g / 2) * interval '1 hour'
		FROM generate_series(1, 3007) g`, m.ID, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE payments`); err != nil {
		t.Fatal(err)
	}
	s := tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
	var got []string
	p := page.Params{Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("the cursor does not end")
		}
		res, err := payments.ListForSubscription(ctx, db, s, "sub_a", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res.Items {
			got = append(got, x.ID)
		}
		if res.Next == nil {
			break
		}
		p.Before = res.Next
	}
	if strings.Join(got, " ") != "pay_7 pay_6 pay_5 pay_4 pay_3 pay_2 pay_1" {
		t.Fatalf("listed %v", got)
	}
	plan := testdb.ReadPlan(t, db, func(q store.Querier) error {
		_, err := payments.ListForSubscription(ctx, q, s, "sub_a", page.Params{Limit: 25})
		return err
	})
	if !strings.Contains(plan, "payments_subscription") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the list does not walk its index:\n%s", plan)
	}
}

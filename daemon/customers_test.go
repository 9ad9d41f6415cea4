package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// GET /v1/customers/{id} finds a customer by cus_ id or by external id, in
// the key's merchant and mode only, and never creates one.
func TestGetCustomer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	merchant := b.merchant("acme")
	_, key := b.key(merchant, tenant.Test)
	c := b.client(key)
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "5", ExternalCustomerID: "u_42"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{g.CustomerID, "u_42"} {
		cus, err := c.GetCustomer(ctx, ref)
		if err != nil {
			t.Fatalf("GetCustomer(%q): %v", ref, err)
		}
		if cus.Object != "customer" || cus.ID != g.CustomerID || cus.ExternalCustomerID == nil || *cus.ExternalCustomerID != "u_42" || cus.Livemode || cus.CreatedAt.IsZero() {
			t.Fatalf("GetCustomer(%q) = %+v", ref, cus)
		}
	}
	// Unknown ids and other modes' customers are 404 unknown_customer, and a
	// lookup does not upsert.
	_, live := b.key(merchant, tenant.Live)
	for _, tc := range []struct{ key, ref string }{{key, "u_nobody"}, {key, "cus_nope"}, {live, "u_42"}, {live, g.CustomerID}} {
		_, err := b.client(tc.key).GetCustomer(ctx, tc.ref)
		apiErr(t, err, http.StatusNotFound, client.CodeUnknownCustomer)
	}
	if _, err := c.GetCustomer(ctx, "u_nobody"); err == nil {
		t.Fatal("a lookup created a customer")
	}
	status, _, body := b.raw("GET", "/v1/customers/u_42", "", "")
	if status != http.StatusUnauthorized || !strings.Contains(body, "unauthorized") {
		t.Fatalf("without a key: %d %s", status, body)
	}
}

// GET /v1/subscriptions?customer_id= lists that customer's subscriptions,
// paging with before like every list.
func TestListSubscriptionsOfCustomer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	merchant := b.merchant("acme")
	_, key := b.key(merchant, tenant.Test)
	c := b.client(key)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	insert := func(id, customer string, at time.Time) {
		t.Helper()
		_, err := b.db.ExecContext(ctx, `INSERT INTO subscriptions (merchant_id, mode, id, plan_id, customer_id, status, created_at)
			VALUES ($1, 'test', $2, 'price_' || $2, $3, 'active', $4)`, merchant, id, customer, at)
		if err != nil {
			t.Fatal(err)
		}
	}
	insert("sub_a1", "cus_a", base)
	insert("sub_b1", "cus_b", base.Add(time.Second))
	insert("sub_a2", "cus_a", base.Add(2*time.Second))
	insert("sub_a3", "cus_a", base.Add(3*time.Second))

	var got []string
	p := client.SubscriptionListParams{ListParams: client.ListParams{Limit: 2}, CustomerID: "cus_a"}
	for {
		page, err := c.ListSubscriptionsFiltered(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Data {
			got = append(got, s.ID)
		}
		if !page.HasMore {
			break
		}
		p.Before = page.NextCursor
	}
	if strings.Join(got, ",") != "sub_a3,sub_a2,sub_a1" {
		t.Fatalf("cus_a's subscriptions = %v", got)
	}
	all, err := c.ListSubscriptionsFiltered(ctx, client.SubscriptionListParams{})
	if err != nil || len(all.Data) != 4 {
		t.Fatalf("unfiltered list: %v, %v", all, err)
	}
	none, err := c.ListSubscriptionsFiltered(ctx, client.SubscriptionListParams{CustomerID: "cus_nobody"})
	if err != nil || len(none.Data) != 0 || none.HasMore {
		t.Fatalf("unknown customer: %+v, %v", none, err)
	}
	_, err = c.ListSubscriptionsFiltered(ctx, client.SubscriptionListParams{ListParams: client.ListParams{Before: "yesterday"}, CustomerID: "cus_a"})
	apiErr(t, err, http.StatusBadRequest, client.CodeInvalidRequest)
}

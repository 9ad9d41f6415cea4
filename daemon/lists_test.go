package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Rows created in one transaction share created_at; walking pages must still
// return each exactly once, newest first.
func TestPaginationWithTies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	ctx := context.Background()
	scope := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	const n = 57
	now := time.Now()
	err := b.db.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			if _, err := invoices.Create(ctx, tx, scope, invoices.Input{Amount: money.Amount(i + 1), Description: strconv.Itoa(i)}, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var distinct int
	if err := b.db.Get(&distinct, `SELECT count(DISTINCT created_at) FROM invoices`); err != nil || distinct != 1 {
		t.Fatalf("want one shared created_at, got %d (%v)", distinct, err)
	}
	c := b.client(key)
	for _, limit := range []int{1, 7, 25, 56, 57, 100} {
		seen := map[string]bool{}
		var order []int
		pages := 0
		for page, err := range client.Pages(ctx, c.ListInvoices, client.ListParams{Limit: limit}) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Data) > limit {
				t.Fatalf("page of %d with limit %d", len(page.Data), limit)
			}
			for _, inv := range page.Data {
				if seen[inv.ID] {
					t.Fatalf("limit %d: %s returned twice", limit, inv.ID)
				}
				seen[inv.ID] = true
				i, _ := strconv.Atoi(inv.Description)
				order = append(order, i)
			}
			if page.HasMore {
				if _, err := time.Parse(time.RFC3339Nano, page.NextCursor); err != nil {
					t.Fatalf("next_cursor %q is not a date-time: %v", page.NextCursor, err)
				}
			}
		}
		if len(seen) != n {
			t.Fatalf("limit %d: saw %d of %d", limit, len(seen), n)
		}
		for i := 1; i < len(order); i++ {
			if order[i] > order[i-1] {
				t.Fatalf("limit %d: not newest first: %v", limit, order)
			}
		}
		if want := (n + limit - 1) / limit; pages != want {
			t.Fatalf("limit %d: %d pages, want %d", limit, pages, want)
		}
	}
}

func TestListParameters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	ctx := context.Background()
	for i := range 3 {
		if _, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "limit=2.5", "limit=", "before=yesterday", "before=2026-13-01T00:00:00Z"} {
		status, _, body := b.raw("GET", "/v1/invoices?"+q, key, "")
		if status != 400 || !strings.Contains(body, `"invalid_request"`) {
			t.Fatalf("%s: %d %s", q, status, body)
		}
		field := strings.SplitN(q, "=", 2)[0]
		if !strings.Contains(body, `"message":"`+field+`:`) {
			t.Fatalf("%s: message does not name %s: %s", q, field, body)
		}
	}
	for _, q := range []string{"limit=1", "limit=100", "", "before=2999-01-01T00:00:00Z", "before=2999-01-01T00:00:00%2B02:00"} {
		if status, _, body := b.raw("GET", "/v1/invoices?"+q, key, ""); status != 200 {
			t.Fatalf("%s: %d %s", q, status, body)
		}
	}
	// A plain date-time cursor means "created strictly before".
	_, _, body := b.raw("GET", "/v1/invoices?before=2000-01-01T00:00:00Z", key, "")
	var l struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil || len(l.Data) != 0 {
		t.Fatalf("before=2000: %s", body)
	}
	// Every list resource answers with the envelope, empty ones included.
	for _, res := range []string{"payments", "subscriptions", "events", "meters", "invoices"} {
		status, _, body := b.raw("GET", "/v1/"+res, key, "")
		if status != 200 || !strings.Contains(body, `"object":"list"`) || !strings.Contains(body, `"has_more":false`) || !strings.Contains(body, `"next_cursor":null`) {
			t.Fatalf("%s: %d %s", res, status, body)
		}
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, key := b.testClient()
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/widgets", 404, "resource_not_found"},
		{"GET", "/v1/plans", 404, "resource_not_found"},
		{"POST", "/v1/payments", 405, "method_not_allowed"},
		{"POST", "/v1/subscriptions", 405, "method_not_allowed"},
		{"POST", "/v1/events", 405, "method_not_allowed"},
		{"DELETE", "/v1/invoices", 405, "method_not_allowed"},
		{"GET", "/nowhere", 404, "resource_not_found"},
		{"GET", "/v2/invoices", 404, "resource_not_found"},
	}
	for _, tc := range cases {
		status, h, body := b.raw(tc.method, tc.path, key, "")
		if status != tc.status || !strings.Contains(body, `"code":"`+tc.code+`"`) || h.Get("wc-version") != daemon.APIVersion {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, status, body)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		status, h, _ := b.raw("GET", path, "", "")
		if status != 200 || h.Get("wc-version") == "" || !strings.HasPrefix(h.Get("request-id"), "req_") {
			t.Fatalf("%s: %d", path, status)
		}
	}
	b.raw("GET", "/v1/invoices", key, "")
	status, _, metrics := b.raw("GET", "/metrics", "", "")
	for _, want := range []string{`tollgate_http_requests_total{method="GET",route="GET /v1/invoices",status="200"}`, "tollgate_http_request_duration_seconds_bucket", "go_sql_max_open_connections"} {
		if status != 200 || !strings.Contains(metrics, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Limits["list"] = 3; c.Limits["create"] = 2 })
	c, key := b.testClient()
	ctx := context.Background()
	for range 3 {
		if _, err := c.ListInvoices(ctx, client.ListParams{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.ListMeters(ctx, client.ListParams{}) // same class, shared budget
	e := apiErr(t, err, 429, "rate_limited")
	if e.RetryAfter < time.Second || e.RetryAfter > 60*time.Second {
		t.Fatalf("retry-after %v", e.RetryAfter)
	}
	status, h, _ := b.raw("GET", "/v1/events", key, "")
	if ra, _ := strconv.Atoi(h.Get("retry-after")); status != http.StatusTooManyRequests || ra < 1 || ra > 60 {
		t.Fatalf("got %d retry-after %q", status, h.Get("retry-after"))
	}
	// Another class has its own budget, and another key its own.
	if _, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"}); err != nil {
		t.Fatal(err)
	}
	other, _ := b.testClient()
	if _, err := other.ListInvoices(ctx, client.ListParams{}); err != nil {
		t.Fatal(err)
	}
}

func TestRateLimitsOff(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Limits["list"] = 1; c.RateLimits = false })
	c, _ := b.testClient()
	for range 5 {
		if _, err := c.ListInvoices(context.Background(), client.ListParams{}); err != nil {
			t.Fatal(err)
		}
	}
}

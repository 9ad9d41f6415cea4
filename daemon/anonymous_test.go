package daemon_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
)

// The surfaces anyone may call without a key are rate-limited per peer
// address: dynamic registration (5,000 of them once took 13 s and no
// 429) by oauth_register, checkout and /oauth/… together by anonymous,
// each with a 429 and retry-after; the API's keys are not touched.
func TestAnonymousSurfacesRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) {
		c.Limits[ratelimit.ClassRegister] = 3
		c.Limits[ratelimit.ClassAnonymous] = 10
	})
	c, key := b.testClient()
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "5000000", Description: "limits"})
	if err != nil {
		t.Fatal(err)
	}
	const reg = `{"redirect_uris":["http://127.0.0.1:9/cb"],"client_name":"probe"}`
	for i := range 4 {
		status, h, body := b.raw("POST", "/oauth/register", "", reg)
		switch {
		case i < 3 && status != 201:
			t.Fatalf("registration %d: %d %s", i, status, body)
		case i == 3 && (status != 429 || h.Get("Retry-After") == "" || !strings.Contains(body, "oauth_register")):
			t.Fatalf("registration past the limit: %d %v %s", status, h, body)
		}
	}
	// Four requests counted so far (the refused registration too); six
	// more pages, then 429.
	for i := range 7 {
		status, _, body := b.raw("GET", "/checkout/"+inv.ID, "", "")
		switch {
		case i < 6 && status != 200:
			t.Fatalf("page %d: %d %.200s", i, status, body)
		case i == 6 && (status != 429 || !strings.Contains(body, "anonymous")):
			t.Fatalf("page past the limit: %d %.200s", status, body)
		}
	}
	if status, _, body := b.raw("GET", "/v1/invoices", key, ""); status != 200 {
		t.Fatalf("the API with a key: %d %s", status, body)
	}
}

// A checkout page shows back at most 255 characters of an
// external_customer_id (a 900 KB one made a 6.3 MB page).
func TestCheckoutReflectsAtMost255(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	pl, err := c.CreatePlan(context.Background(), client.PlanParams{Name: "Weekly", Amount: "1000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 300)
	status, _, body := b.raw("GET", "/checkout/"+pl.ID+"?external_customer_id="+url.QueryEscape(long), "", "")
	if status != 200 || strings.Contains(body, strings.Repeat("é", 256)) || !strings.Contains(body, strings.Repeat("é", 255)) {
		t.Fatalf("%d, %d bytes", status, len(body))
	}
}

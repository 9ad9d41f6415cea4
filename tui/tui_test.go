package tui_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/client/webhook"
)

func grant(t *testing.T, c *client.Client, external, amount string) *client.CreditGrant {
	t.Helper()
	g, err := c.GrantCredits(context.Background(), client.CreditGrantParams{Amount: amount, ExternalCustomerID: external})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The tail catches up on the window, then follows new events; / filters;
// y copies the id with OSC 52; r replays the event signed to a handler.
func TestEventsTail(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	first := grant(t, e.client, "u_1", "5000000")
	grant(t, e.client, "u_2", "1500000")

	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
		_, _ = io.WriteString(w, "thanks")
	}))
	defer handler.Close()
	var clip strings.Builder
	o := e.options()
	o.ForwardTo, o.Secret, o.Output = handler.URL+"/hooks", "whsec_local", &clip
	h := newHarness(t, o)

	screen := h.shows("2 events", "● connected", "1.50 USDC")
	golden(t, "events", screen)

	// Following: an event made after the start appears.
	third := grant(t, e.client, "u_3", "250000")
	h.shows("3 events", third.CustomerID, "0.25 USDC")

	// Filter by id (the first customer's), then clear it.
	h.keys("/", first.CustomerID[:12])
	h.shows("1 of 3 events", first.CustomerID)
	h.keys("enter")
	screen = h.shows("filter: " + first.CustomerID[:12])
	if strings.Contains(screen, third.CustomerID) {
		t.Fatalf("filtered screen shows another customer:\n%s", screen)
	}
	h.keys("esc")
	h.shows("3 events")
	h.keys("G")

	// Autoscroll keeps the newest selected; y copies its id.
	h.keys("y")
	h.shows("copied evt_")
	page, err := e.client.ListEvents(context.Background(), client.ListParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	newest := page.Data[0]
	if want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(newest.ID)) + "\x07"; clip.String() != want {
		t.Fatalf("clipboard output %q, want %q", clip.String(), want)
	}

	// r replays the selected event, signed, and shows the handler's answer.
	h.keys("r")
	h.shows("[200] POST "+handler.URL+"/hooks", "handler answered: thanks")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("handler got %d requests", len(got))
	}
	if err := webhook.Verify(bodies[0], got[0].Header.Get(webhook.HeaderName), "whsec_local", 0); err != nil {
		t.Fatalf("replay signature: %v", err)
	}
	if got[0].Header.Get("wc-event-id") != newest.ID || string(bodies[0]) != string(webhook.Compact(newest.Raw)) {
		t.Fatalf("replayed %s %s, want the event as the API returned it", got[0].Header.Get("wc-event-id"), bodies[0])
	}
}

// Without --forward-to, r explains what replay needs instead of failing
// silently.
func TestReplayNeedsTarget(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	grant(t, e.client, "u_1", "1")
	h := newHarness(t, e.options())
	h.shows("1 events")
	h.keys("r")
	h.shows("replay needs --forward-to")
}

// The lists page through the cursor API, fetching the next page as the
// cursor nears the end.
func TestInvoicesList(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	ctx := context.Background()
	for i := range 55 {
		if _, err := e.client.CreateInvoice(ctx, client.InvoiceParams{Amount: fmt.Sprint(1000000 * (i + 1)), Description: fmt.Sprintf("Order %d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, e.options())
	h.keys("2")
	screen := h.shows("● connected", "50 loaded · more below", "Order 55", "55.00 USDC")
	golden(t, "invoices", screen)
	h.keys("G") // the last loaded row: near the end, so the next page loads
	h.shows("55 loaded · all")
	h.keys("G")
	h.shows("› inv_", "Order 1 ")
	h.keys("enter")
	h.shows(`"description": "Order 1"`, "details (esc to go back)")
	h.keys("esc", "3")
	h.shows("No payments.")
	h.keys("4")
	h.shows("No subscriptions.")
}

// The form shows the API's validation error on the field it names, and the
// checkout URL on success; the invoice then shows in the Invoices tab.
func TestInvoiceForm(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	h := newHarness(t, e.options())
	h.keys("7", "12.5", "tab", "tab", "a memo", "ctrl+s")
	screen := h.shows("● connected", "Description", "✗ must be 1 to 500 characters", "✗ the API refused")
	if !regexpMust(`Description .*\n +✗ must be`).MatchString(screen) {
		t.Fatalf("the error is not under the description field:\n%s", screen)
	}
	golden(t, "form_error", screen)

	h.keys("shift+tab", "Workshop", "enter", "enter", "2026-12-31", "enter")
	screen = h.shows("● connected", "✓ created inv_", "/checkout/inv_", "\ncreated inv_")
	golden(t, "form_created", screen)
	inv := regexpFind(t, screen, `inv_[0-9A-Za-z]{24}`)
	list, err := e.client.ListInvoices(context.Background(), client.ListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != inv || list.Data[0].Amount != "12500000" || list.Data[0].DueAt == nil {
		t.Fatalf("invoices: %+v, %v", list, err)
	}
	h.keys("esc", "2")
	h.shows(inv, "Workshop", "12.50 USDC")

	// A local check: a bad amount never reaches the API.
	h.keys("7", "1.2345678", "ctrl+s")
	h.shows("✗ USDC has at most 6 decimals")
}

// The customer view finds a customer by external id and shows credits, an
// entitlement check and subscriptions.
func TestCustomerView(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	ctx := context.Background()
	g := grant(t, e.client, "u_42", "7000000")
	if _, err := e.client.DebitCredits(ctx, client.CreditDebitParams{Amount: "2000000", CustomerID: g.CustomerID}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateFeature(ctx, client.FeatureParams{Key: "exports", Name: "Exports"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "exports", CustomerID: g.CustomerID}); err != nil {
		t.Fatal(err)
	}
	// Usage this period: a sparkline of the days, today's the highest.
	if _, err := e.client.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.client.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", CustomerID: g.CustomerID}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, e.options())
	h.keys("6", "u_42", "enter")
	h.shows(g.CustomerID, "balance 5.00 USDC · granted 7.00 USDC · consumed 2.00 USDC", "Subscriptions (0)", "▁█  3 (count)")
	h.keys("tab", "exports", "enter")
	screen := h.shows("● connected", "exports: entitled (active)")
	golden(t, "customer", screen)

	h.keys("shift+tab", "ctrl+u", "u_nobody", "enter")
	h.shows("unknown_customer")
}

func regexpFind(t *testing.T, s, re string) string {
	t.Helper()
	m := regexpMust(re).FindString(s)
	if m == "" {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	return m
}

package tui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui"
)

// clockServer answers the test clock endpoints as the API describes them
// (the daemon's are being built elsewhere), and an empty event feed.
func clockServer(t *testing.T) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	clock := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "test_clock", "now": now.Format(time.RFC3339)})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/test_helpers/clock", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		clock(w)
	})
	mux.HandleFunc("POST /v1/test_helpers/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ By string }
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &in) != nil || in.By != "30d" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"invalid_request","message":"by: want a duration"}}`)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(30 * 24 * time.Hour)
		clock(w)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[],"has_more":false,"next_cursor":null}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The clock tab shows the clock and advances it by a duration.
func TestTestClockTab(t *testing.T) {
	t.Parallel()
	srv := clockServer(t)
	key := "sk_test_fake"
	h := newHarness(t, tui.Options{Client: client.New(srv.URL, key, client.WithMaxRetries(0)), APIURL: srv.URL, APIKey: key})
	h.keys("8")
	h.shows("Now  2026-07-01 12:00:00 UTC")
	h.keys("30d", "enter")
	h.shows("Now  2026-07-31 12:00:00 UTC", "✓ advanced")
	h.keys("ctrl+u", "3 days", "enter")
	h.shows("✗ invalid_request: by: want a duration")
}

// Against a real daemon: the tab shows the merchant's clock, advancing it
// renews a subscription, and the renewal arrives in the events tail.
func TestTestClockTabRenews(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	ctx := context.Background()
	p, err := e.client.CreatePlan(ctx, client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Pay(ctx, p.ID, client.CheckoutParams{Payer: magicWallet}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e.options())
	h.keys("8")
	h.shows("● connected", "Now  "+time.Now().UTC().Format("2006-01-02"))
	h.keys("8d", "enter")
	h.shows("✓ advanced", "Now  "+time.Now().UTC().Add(8*24*time.Hour).Format("2006-01-02"))
	h.keys("esc", "1")
	h.shows("subscription.renewed")
}

// A live key gets no clock calls at all, and the header says LIVE.
func TestLiveMode(t *testing.T) {
	t.Parallel()
	srv := clockServer(t)
	key := "sk_live_fake"
	h := newHarness(t, tui.Options{Client: client.New(srv.URL, key, client.WithMaxRetries(0)), APIURL: srv.URL, APIKey: key})
	h.keys("8")
	screen := h.shows("LIVE MODE", "test mode only")
	if strings.Contains(screen, "TEST MODE") {
		t.Fatalf("live key shown as test:\n%s", screen)
	}
}

// In test mode the Events tab's windows are measured by the merchant's test
// clock: after the clock tab advances it, events stamped by the advanced
// clock are inside "last 1 h" and those from before the advance are not.
func TestEventsWindowFollowsTestClock(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	before := grant(t, e.client, "u_before", "1000000")
	h := newHarness(t, e.options())
	h.shows("last 24 h · 1 events", before.CustomerID)

	h.keys("8")
	h.shows("● connected", "Now  ")
	h.keys("2d", "enter")
	h.shows("✓ advanced")
	h.keys("esc", "1")
	// The window moved with the clock: the earlier grant is two days old.
	h.until("the pre-advance event to leave the 24 h window", func(s string) bool {
		return strings.Contains(s, "last 24 h · 0 events") && !strings.Contains(s, before.CustomerID)
	})
	after := grant(t, e.client, "u_after", "2000000")
	h.shows("last 24 h · 1 events", after.CustomerID, "2.00 USDC")

	h.keys("w") // 7 d holds both
	h.shows("last 7 d · 2 events", before.CustomerID, after.CustomerID)
	h.keys("w") // 1 h, caught up again by the test clock
	screen := h.shows("last 1 h · 1 events", after.CustomerID)
	if strings.Contains(screen, before.CustomerID) {
		t.Fatalf("an event from before the advance is in the last hour:\n%s", screen)
	}
}

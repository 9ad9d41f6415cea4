package pages

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
)

// The tail's pacing: it asks again at once while pages are full, every
// second after events arrived, backing off to every 4 s while nothing
// happens, and from 1 s doubling to 30 s while the daemon cannot be reached.
const (
	pollInterval    = time.Second
	maxIdleInterval = 4 * time.Second
	minRetry        = time.Second
	maxRetry        = 30 * time.Second
	tailPage        = 100
)

// Conn is the tail's view of the daemon, shown in the header.
type Conn struct {
	// State is "connecting", "connected" or "reconnecting".
	State string
	// Err is the last failure while reconnecting.
	Err string
	// Attempt counts failed tries since the last success.
	Attempt int
	// Retry is the wait before the next try.
	Retry time.Duration
}

// tailMsg is one answer of the feed: a catch-up (newest events back to the
// window's start) or a page of events after the last one seen. A catch-up
// also carries skew, the merchant's test clock minus the wall clock (0 in
// live mode), which its window was measured by.
type tailMsg struct {
	gen     int
	catchUp bool
	events  []client.Event
	after   string
	hasMore bool
	skew    time.Duration
	err     error
}

// clockSkew is how far the merchant's test clock runs ahead of wall (GET
// /v1/test_helpers/clock); 0 from a daemon without test clocks.
func clockSkew(ctx context.Context, c *client.Client, wall func() time.Time) (time.Duration, error) {
	clock, err := c.GetTestClock(ctx)
	if err != nil {
		if common.NotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	return clock.Now.Sub(wall()), nil
}

// catchUp reads the events of the last window newest first, at most max of
// them, and returns them oldest first with the id to follow from. The
// window ends at the merchant's test clock when testMode is set (events are
// stamped by it), else at the wall clock.
func catchUp(ctx context.Context, c *client.Client, gen int, window time.Duration, testMode bool, wall func() time.Time, maxEvents int) tea.Cmd {
	return func() tea.Msg {
		var skew time.Duration
		if testMode {
			var err error
			if skew, err = clockSkew(ctx, c, wall); err != nil {
				return tailMsg{gen: gen, catchUp: true, err: err}
			}
		}
		cutoff := wall().Add(skew - window)
		var got []client.Event
		p := client.ListParams{Limit: tailPage}
		newest := ""
		for len(got) < maxEvents {
			page, err := c.ListEvents(ctx, p)
			if err != nil {
				return tailMsg{gen: gen, catchUp: true, err: err}
			}
			if newest == "" && len(page.Data) > 0 {
				newest = page.Data[0].ID
			}
			older := false
			for _, ev := range page.Data {
				if ev.CreatedAt.Before(cutoff) {
					older = true
					break
				}
				got = append(got, ev)
			}
			if older || !page.HasMore {
				break
			}
			p.Before = page.NextCursor
		}
		if len(got) > maxEvents {
			got = got[:maxEvents]
		}
		slices.Reverse(got)
		if newest == "" {
			newest = "1970-01-01T00:00:00Z" // an empty feed: follow from its start
		}
		return tailMsg{gen: gen, catchUp: true, events: got, after: newest, skew: skew}
	}
}

// poll waits delay, then asks for the events after `after`.
func poll(ctx context.Context, c *client.Client, gen int, after string, delay time.Duration) tea.Cmd {
	return func() tea.Msg {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		page, err := c.ListEventsAfter(ctx, client.EventsAfterParams{After: after, Limit: tailPage})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return tailMsg{gen: gen, after: after, err: err}
		}
		next := after
		if n := len(page.Data); n > 0 {
			next = page.Data[n-1].ID
		}
		return tailMsg{gen: gen, events: page.Data, after: next, hasMore: page.HasMore}
	}
}

// unreachable reports whether err means the daemon is away (not answering,
// restarting, overloaded) rather than refusing the request.
func unreachable(err error) bool {
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		return apiErr.Status == http.StatusTooManyRequests || apiErr.Status >= 500
	}
	return true
}

// eventRow is what the tail keeps of an event: the cells of its row and the
// JSON for the detail pane and replay. Ev.Data is dropped (Raw holds it).
type eventRow struct {
	id, typ, obj, amount string
	at                   time.Time
	raw                  []byte
}

func rowOf(ev client.Event) eventRow {
	var data struct {
		ID         string `json:"id"`
		CustomerID string `json:"customer_id"`
		Amount     string `json:"amount"`
		Granted    string `json:"granted"`
		Requested  string `json:"requested"`
	}
	_ = json.Unmarshal(ev.Data, &data) // a payload of another shape shows no id or amount
	r := eventRow{id: ev.ID, typ: ev.Type, obj: data.ID, at: ev.CreatedAt, raw: ev.Raw}
	if r.obj == "" {
		r.obj = data.CustomerID
	}
	for _, a := range []string{data.Amount, data.Granted, data.Requested} {
		if a != "" {
			r.amount = a
			break
		}
	}
	return r
}

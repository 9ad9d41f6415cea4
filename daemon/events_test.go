package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

func TestEventsAfter(t *testing.T) {
	t.Parallel()
	b := setupListening(t)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	var ids []string
	for i := range 5 {
		ids = append(ids, emit(t, b.db, s, "credit.granted", map[string]any{"n": i}).ID)
	}
	c := b.client(key)
	ctx := context.Background()
	// The feed holds back events positioned after a transaction still open
	// on the database (a background job's, on a loaded machine), so the
	// walk is retried until they have settled.
	var got []string
	eventually(t, 10*time.Second, "the events after the first, oldest first", func() bool {
		got = nil
		after := ids[0]
		for range 3 {
			page, err := c.ListEventsAfter(ctx, clientAfter(after, 2))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Data {
				got = append(got, e.ID)
			}
			if !page.HasMore {
				break
			}
			after = page.NextCursor
		}
		return strings.Join(got, ",") == strings.Join(ids[1:], ",")
	})
	// A date-time means at or after that instant.
	page, err := c.ListEventsAfter(ctx, clientAfter("2000-01-01T00:00:00Z", 100))
	if err != nil || len(page.Data) != 5 || page.Data[0].ID != ids[0] {
		t.Fatalf("after 2000: %v %v", page, err)
	}
	for q, field := range map[string]string{
		"after=evt_nope": "after", "after=yesterday": "after", "after=" + ids[0] + "&before=2030-01-01T00:00:00Z": "after",
		"after=" + ids[0] + "&limit=101": "limit",
	} {
		status, _, body := b.raw("GET", "/v1/events?"+q, key, "")
		if status != 400 || !strings.Contains(body, `"invalid_request"`) || !strings.Contains(body, field) {
			t.Errorf("%s: %d %s", q, status, body)
		}
	}
	// Another merchant's event id is unknown here.
	other := b.merchant("other")
	_, otherKey := b.key(other, tenant.Test)
	if status, _, _ := b.raw("GET", "/v1/events?after="+ids[0], otherKey, ""); status != 400 {
		t.Errorf("another merchant's event as after: %d", status)
	}
}

// clientAfter builds the parameters of ListEventsAfter.
func clientAfter(after string, limit int) client.EventsAfterParams {
	return client.EventsAfterParams{After: after, Limit: limit}
}

package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// pagedMeters serves n meters, newest first, with cursors "c<index>" that
// the client must pass back unchanged as before.
func pagedMeters(t *testing.T, n int, requests *[]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		*requests = append(*requests, r.URL.RawQuery)
		if r.URL.Path != "/v1/meters" {
			t.Errorf("path = %s", r.URL.Path)
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		start := 0
		if b := r.URL.Query().Get("before"); b != "" {
			start, _ = strconv.Atoi(strings.TrimPrefix(b, "c"))
		}
		end := min(start+limit, n)
		var items []string
		for i := start; i < end; i++ {
			items = append(items, fmt.Sprintf(`{"object":"meter","id":"meter_%d","key":"k%d"}`, i, i))
		}
		cursor := "null"
		if end < n {
			cursor = fmt.Sprintf(`"c%d"`, end)
		}
		reply(w, 200, fmt.Sprintf(`{"object":"list","data":[%s],"has_more":%t,"next_cursor":%s}`,
			strings.Join(items, ","), end < n, cursor))
	}
}

func TestAllWalksEveryPage(t *testing.T) {
	t.Parallel()
	var requests []string
	c := setup(t, pagedMeters(t, 5, &requests))
	var ids []string
	for m, err := range client.All(context.Background(), c.ListMeters, client.ListParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		if want := fmt.Sprintf(`{"object":"meter","id":"%s","key":"%s"}`, m.ID, m.Key); string(m.Raw) != want {
			t.Errorf("Raw = %s, want %s", m.Raw, want)
		}
	}
	if got := strings.Join(ids, ","); got != "meter_0,meter_1,meter_2,meter_3,meter_4" {
		t.Errorf("ids = %s", got)
	}
	if got := strings.Join(requests, " "); got != "limit=2 before=c2&limit=2 before=c4&limit=2" {
		t.Errorf("requests = %s", got)
	}
}

func TestPagesStopsEarly(t *testing.T) {
	t.Parallel()
	var requests []string
	c := setup(t, pagedMeters(t, 10, &requests))
	for page, err := range client.Pages(context.Background(), c.ListMeters, client.ListParams{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if !page.HasMore || page.NextCursor != "c3" || !strings.HasPrefix(string(page.Raw), `{"object":"list"`) {
			t.Errorf("page = %+v", page)
		}
		break
	}
	if len(requests) != 1 {
		t.Errorf("requests = %v, want one page fetched", requests)
	}
}

func TestPagesRejectsStuckCursor(t *testing.T) {
	t.Parallel()
	var hits int
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		reply(w, 200, `{"object":"list","data":[{"object":"event","id":"evt_1","type":"invoice.paid","data":{}}],"has_more":true,"next_cursor":null}`)
	})
	var n int
	var lastErr error
	for _, err := range client.All(context.Background(), c.ListEvents, client.ListParams{}) {
		n++
		lastErr = err
	}
	if lastErr == nil || n != 2 || hits != 1 {
		t.Errorf("n=%d hits=%d err=%v, want the item then an error, not a loop", n, hits, lastErr)
	}
}

func TestPagesStopsOnError(t *testing.T) {
	t.Parallel()
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 401, `{"error":{"code":"unauthorized","message":"invalid API key"}}`)
	})
	for page, err := range client.Pages(context.Background(), c.ListInvoices, client.ListParams{}) {
		if page != nil || err == nil {
			t.Fatalf("page=%v err=%v", page, err)
		}
	}
}

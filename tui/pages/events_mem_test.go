package pages

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
)

// feed sends n events to the tail as pages of 100, the way the daemon's
// answers arrive, without running the polls those answers schedule.
func feed(e *Events, n int) {
	at := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i += tailPage {
		evs := make([]client.Event, 0, tailPage)
		for j := i; j < min(i+tailPage, n); j++ {
			id := fmt.Sprintf("evt_%024d", j)
			data := fmt.Sprintf(`{"object":"credit_grant","customer_id":"cus_%024d","granted":"%d","balance":"%d","entry_id":"cle_%024d"}`, j%977, j, j, j)
			raw := fmt.Sprintf(`{"object":"event","id":%q,"type":"credit.granted","created_at":%q,"data":%s,"livemode":false}`, id, at.Format(time.RFC3339Nano), data)
			evs = append(evs, client.Event{Object: "event", ID: id, Type: "credit.granted", CreatedAt: at, Data: json.RawMessage(data), Raw: json.RawMessage(raw)})
			at = at.Add(time.Millisecond)
		}
		e.Update(tailMsg{gen: e.gen, events: evs, after: evs[len(evs)-1].ID, hasMore: true})
	}
}

func newTestEvents() *Events {
	c := &common.Common{Ctx: context.Background(), Styles: common.NewStyles(false),
		Keys: common.DefaultKeyMap(), Now: time.Now}
	e := NewEvents(c, Replay{}, func(string) error { return nil })
	e.SetSize(80, 20)
	e.gen = 1
	return e
}

// Following 100,000 events keeps only the newest MaxEvents, the newest
// selected, and the heap small.
func TestEventsMemoryBounded(t *testing.T) {
	e := newTestEvents()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	feed(e, 100_000)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if e.Len() != MaxEvents {
		t.Fatalf("kept %d events, want %d", e.Len(), MaxEvents)
	}
	if first, last := e.rows[0].id, e.selected().id; first != fmt.Sprintf("evt_%024d", 100_000-MaxEvents) || last != fmt.Sprintf("evt_%024d", 99_999) {
		t.Fatalf("kept %s … %s selected", first, last)
	}
	const limit = 64 << 20
	t.Logf("heap in use after 100,000 events: %.1f MiB (%.1f MiB before)", float64(after.HeapInuse)/(1<<20), float64(before.HeapInuse)/(1<<20))
	if after.HeapInuse > limit {
		t.Fatalf("heap in use %d bytes after 100,000 events, want under %d", after.HeapInuse, limit)
	}
	runtime.KeepAlive(e)
}

// With a filter, the kept window still shrinks and the selection follows
// the events that remain.
func TestEventsFilterAcrossDrops(t *testing.T) {
	e := newTestEvents()
	e.filter.SetValue("cus_000000000000000000000005")
	e.refilter()
	feed(e, 12_000)
	if e.Len() != MaxEvents {
		t.Fatalf("kept %d", e.Len())
	}
	for i := 0; i < e.count(); i++ {
		if r := e.at(i); r.obj != "cus_000000000000000000000005" {
			t.Fatalf("row %d (%s) does not match the filter", i, r.obj)
		}
	}
	if e.count() == 0 || e.count() > MaxEvents/977+1 {
		t.Fatalf("%d rows match", e.count())
	}
}

// BenchmarkFollow100k reports the heap in use after following 100,000
// events (the figure in tui/README.md).
func BenchmarkFollow100k(b *testing.B) {
	for range b.N {
		e := newTestEvents()
		feed(e, 100_000)
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(m.HeapInuse)/(1<<20), "MiB-heap")
		runtime.KeepAlive(e)
	}
}

package metering

import (
	"context"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestPlanCoversTheSpanOnce(t *testing.T) {
	base := time.Date(2026, 3, 30, 22, 17, 5, 0, time.UTC)
	for _, span := range []time.Duration{time.Minute, 50 * time.Minute, 2 * time.Hour, 26 * time.Hour, 75 * time.Hour, 40 * 24 * time.Hour} {
		for _, from := range []time.Time{base, base.Truncate(time.Hour), base.Truncate(24 * time.Hour)} {
			to := from.Add(span)
			raw, hours, days := plan(from, to)
			// The pieces, in time order, must tile [from, to) exactly.
			pieces := append(append([][2]time.Time{}, raw...), hours...)
			if days[0].Before(days[1]) {
				pieces = append(pieces, days)
			}
			sort.Slice(pieces, func(i, j int) bool { return pieces[i][0].Before(pieces[j][0]) })
			at := from
			for _, p := range pieces {
				if !p[0].Equal(at) || !p[0].Before(p[1]) {
					t.Fatalf("from %s span %s: pieces %v do not tile the span (raw %v, hours %v, days %v)", from, span, pieces, raw, hours, days)
				}
				at = p[1]
			}
			if !at.Equal(to) {
				t.Errorf("from %s span %s: pieces end at %s", from, span, at)
			}
			for _, h := range hours {
				if h[0].Truncate(time.Hour) != h[0] || h[1].Truncate(time.Hour) != h[1] {
					t.Errorf("from %s span %s: hour range %v is not whole hours", from, span, h)
				}
				// A whole day inside an hour range would be read as 24 rows.
				if d0 := ceil(h[0], Day); !d0.AddDate(0, 0, 1).After(h[1]) {
					t.Errorf("from %s span %s: hour range %v holds a whole day", from, span, h)
				}
			}
			if days[0].Before(days[1]) && (floor(days[0], Day) != days[0] || floor(days[1], Day) != days[1]) {
				t.Errorf("from %s span %s: day range %v is not whole days", from, span, days)
			}
			if len(raw) > 2 || len(hours) > 2 {
				t.Errorf("from %s span %s: %d raw and %d hour ranges", from, span, len(raw), len(hours))
			}
		}
	}
}

// fixture is a merchant with a customer, in test mode.
func fixture(t *testing.T) (*store.DB, tenant.Scope, string) {
	t.Helper()
	db := testdb.Open(t)
	ctx := context.Background()
	s := tenant.Scope{MerchantID: "mer_usage", Mode: tenant.Test}
	if _, err := db.ExecContext(ctx, `INSERT INTO merchants (id, name) VALUES ('mer_usage', 'usage')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO customers (merchant_id, mode, id) VALUES ('mer_usage', 'test', 'cus_u')`); err != nil {
		t.Fatal(err)
	}
	return db, s, "cus_u"
}

func ingestAt(t *testing.T, g *Ingester, db *store.DB, s tenant.Scope, key, cust string, v int64, at, now time.Time) Event {
	t.Helper()
	res, err := g.Ingest(context.Background(), db, s, []EventInput{{EventName: key, Value: &v, CustomerID: &cust, Timestamp: &at}}, now)
	if err != nil || res[0].Err != nil {
		t.Fatalf("ingest: %v %v", err, res[0].Err)
	}
	return res[0].Event
}

func TestUsageSummaryAndCancel(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	g := NewIngester()
	meters := map[string]Meter{}
	for _, agg := range []string{Sum, Count, Max, Last} {
		m, _, err := Create(ctx, db, s, Input{Key: "m_" + agg, DisplayName: agg, Aggregation: agg}, now.Add(-40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		meters[agg] = m
	}
	// Events on three days, at hour edges and inside hours.
	stamps := []time.Time{
		time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 7, 13, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 7, 14, 10, 15, 0, 0, time.UTC),
		time.Date(2026, 7, 15, 12, 10, 0, 0, time.UTC),
	}
	values := []int64{5, 9, 2, 4}
	var evs []Event
	for _, agg := range []string{Sum, Count, Max, Last} {
		for i, at := range stamps {
			e := ingestAt(t, g, db, s, "m_"+agg, cust, values[i], at, now)
			if agg == Max {
				evs = append(evs, e)
			}
		}
	}
	day := func(d int) time.Time { return time.Date(2026, 7, d, 0, 0, 0, 0, time.UTC) }
	want := map[string]string{Sum: "20", Count: "4", Max: "9", Last: "4"}
	for agg, w := range want {
		from, to := day(12), now
		u, err := Usage(ctx, db, s, cust, UsageInput{Meter: "m_" + agg, From: &from, To: &to, Window: Day}, now)
		if err != nil {
			t.Fatal(err)
		}
		if u.Value != w || len(u.Windows) != 4 {
			t.Errorf("%s: value %s, %d windows", agg, u.Value, len(u.Windows))
		}
		if agg == Sum && (u.Windows[1].Value != "14" || u.Windows[2].Value != "2" || u.Windows[3].Value != "4" || u.Windows[0].Value != "0") {
			t.Errorf("sum windows %+v", u.Windows)
		}
	}
	// Unaligned ends read the events of the partial hours.
	from, to := time.Date(2026, 7, 13, 0, 0, 0, 1000, time.UTC), time.Date(2026, 7, 15, 12, 10, 0, 0, time.UTC)
	if u, err := Usage(ctx, db, s, cust, UsageInput{Meter: meters[Sum].ID, From: &from, To: &to}, now); err != nil || u.Value != "11" {
		t.Errorf("unaligned: %+v %v", u, err)
	}
	// Cancelling the max event: max falls back to the next one.
	c, err := Cancel(ctx, db, s, evs[1].ID, now)
	if err != nil || c.CancelledAt == nil {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	from = day(12)
	if u, _ := Usage(ctx, db, s, cust, UsageInput{Meter: "m_max", From: &from, To: &now}, now); u.Value != "5" {
		t.Errorf("max after cancel %s", u.Value)
	}
	if _, err := Cancel(ctx, db, s, evs[1].ID, now); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM events WHERE type = 'meter_event.cancelled'`); err != nil || n != 1 {
		t.Errorf("cancel events %d %v", n, err)
	}
	if _, err := Cancel(ctx, db, s, "me_nope", now); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Errorf("unknown: %v", err)
	}
	other := tenant.Scope{MerchantID: s.MerchantID, Mode: tenant.Live}
	if _, err := Cancel(ctx, db, other, evs[0].ID, now); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Errorf("other mode: %v", err)
	}
	// Bad input.
	long := now.Add(-42 * 24 * time.Hour)
	bad := []struct {
		in   UsageInput
		code apperr.Code
	}{
		{UsageInput{Meter: "nope"}, apperr.UnknownMeter},
		{UsageInput{Meter: "m_sum", From: &now, To: &now}, apperr.InvalidRequest},
		{UsageInput{Meter: "m_sum", Window: "week"}, apperr.InvalidRequest},
		{UsageInput{Meter: "m_sum", From: &long, To: &now, Window: Hour}, apperr.InvalidRequest},
	}
	for _, b := range bad {
		if _, err := Usage(ctx, db, s, cust, b.in, now); apperr.CodeOf(err) != b.code {
			t.Errorf("%+v: %v", b.in, err)
		}
	}
	if _, err := Usage(ctx, db, s, "cus_nope", UsageInput{Meter: "m_sum"}, now); apperr.CodeOf(err) != apperr.UnknownCustomer {
		t.Errorf("unknown customer: %v", err)
	}
}

// FuzzParseUsageQuery: any query string is refused with an API error or
// read as a request whose strings are text and whose span is ordered once
// Usage checks it.
func FuzzParseUsageQuery(f *testing.F) {
	for _, s := range []string{"meter=calls", "meter=calls&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&window=hour",
		"meter=%00", "meter=%ff&window=day", "meter=a&meter=b", "x=1", "from=yesterday", "to=99999-01-01T00:00:00Z", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		in, err := ParseUsageQuery(q)
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("non-API error %T %v", err, err)
			}
			return
		}
		if !utf8.ValidString(in.Meter) || strings.IndexByte(in.Meter, 0) >= 0 || !utf8.ValidString(in.Window) {
			t.Fatalf("hostile text accepted: %q %q", in.Meter, in.Window)
		}
		if in.From != nil && in.To != nil {
			if _, err := windows(*in.From, *in.To, Hour); err != nil {
				if _, ok := apperr.As(err); !ok {
					t.Fatalf("windows: non-API error %v", err)
				}
			}
		}
	})
}

// TestUsageMatchesEvents: whatever the batches, writers, shards and
// cancels, every window of a summary equals the aggregate of the
// uncancelled events computed straight from meter_events.
func TestUsageMatchesEvents(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	g := NewIngester()
	aggs := []string{Sum, Count, Max, Last}
	for _, agg := range aggs {
		if _, _, err := Create(ctx, db, s, Input{Key: "m_" + agg, DisplayName: agg, Aggregation: agg}, now.Add(-40*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := now.Add(-72 * time.Hour)
	// 8 writers, 6 batches each of 25 events on random meters, at random
	// instants of the last three days (some shared, to tie on time).
	type batch []EventInput
	var batches []batch
	for range 48 {
		b := make(batch, 25)
		for i := range b {
			v := rng.Int64N(1000)
			at := base.Add(time.Duration(rng.Int64N(72*3600)) * time.Second)
			if rng.IntN(5) == 0 {
				at = base.Add(time.Duration(rng.IntN(3)) * time.Hour)
			}
			b[i] = EventInput{EventName: "m_" + aggs[rng.IntN(4)], Value: &v, CustomerID: &cust, Timestamp: &at}
		}
		batches = append(batches, b)
	}
	// While another transaction holds shards 0 and 1, batches add to shard
	// 2: the buckets then have several shards whatever the writers overlap.
	hold, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		if _, err := hold.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3::int))`,
			bucketShardSpace, usageLockKey(s), n); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range batches[:8] {
		if _, err := g.Ingest(ctx, db, s, b, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 8 + w; i < len(batches); i += 8 {
				res, err := g.Ingest(ctx, db, s, batches[i], now)
				if err != nil {
					t.Error(err)
					return
				}
				for _, r := range res {
					if r.Err != nil {
						t.Error(r.Err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	var ids []string
	if err := db.SelectContext(ctx, &ids, `SELECT id FROM meter_events ORDER BY random() LIMIT 40`); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := Cancel(ctx, db, s, id, now); err != nil {
			t.Fatal(err)
		}
	}
	var shards []int
	if err := db.SelectContext(ctx, &shards, `SELECT DISTINCT shard FROM usage_buckets ORDER BY shard`); err != nil || len(shards) < 2 || shards[0] != 0 {
		t.Fatalf("the batches wrote shards %v (%v)", shards, err)
	}
	direct := func(meterKey string, from, to time.Time) string {
		var v string
		err := db.GetContext(ctx, &v, `SELECT CASE m.aggregation WHEN 'count' THEN count(e.id)::text WHEN 'max' THEN coalesce(max(e.value), 0)::text
				WHEN 'last' THEN coalesce((array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], 0)::text
				ELSE coalesce(sum(e.value), 0)::text END
			FROM meters m LEFT JOIN meter_events e ON e.merchant_id = m.merchant_id AND e.meter_id = m.id
				AND e.event_timestamp >= $3 AND e.event_timestamp < $4 AND e.cancelled_at IS NULL
			WHERE m.merchant_id = $1 AND m.key = $2 GROUP BY m.aggregation`, s.MerchantID, meterKey, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for n := range 40 {
		from := base.Add(-time.Hour + time.Duration(rng.Int64N(74*3600))*time.Second)
		to := from.Add(time.Duration(1+rng.Int64N(80*3600)) * time.Second)
		window := []string{"", Hour, Day, Month}[n%4]
		for _, agg := range aggs {
			u, err := Usage(ctx, db, s, cust, UsageInput{Meter: "m_" + agg, From: &from, To: &to, Window: window}, now)
			if err != nil {
				t.Fatal(err)
			}
			if w := direct("m_"+agg, from, to); u.Value != w {
				t.Errorf("%s [%s, %s): %s, events say %s", agg, from, to, u.Value, w)
			}
			for _, x := range u.Windows {
				if w := direct("m_"+agg, maxTime(x.Start, from), minTime(x.End, to)); x.Value != w {
					t.Errorf("%s window %s of [%s, %s): %s, events say %s", agg, x.Start, from, to, x.Value, w)
				}
			}
		}
	}
}

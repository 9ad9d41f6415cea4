package metering

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
)

// Windows kept through cancels (count and value taken off, the greatest and
// latest value read again from the buckets) equal windows recomputed from
// the events, for every aggregation; and AggregateMany answers what
// Aggregate answers, span by span.
func TestWindowsAndSpansAfterCancelsMatchEvents(t *testing.T) {
	db, s, cust := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	since := time.Date(2026, 7, 10, 7, 45, 0, 0, time.UTC)
	g := NewIngester()
	r := rand.New(rand.NewPCG(7, 25))
	meters := map[string]Meter{}
	ids := map[string][]string{}
	for _, agg := range []string{Sum, Count, Max, Last} {
		m, _, err := Create(ctx, db, s, Input{Key: "w_" + agg, DisplayName: agg, Aggregation: agg}, now.Add(-40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		meters[agg] = m
		if err := db.InTx(ctx, func(tx *store.Tx) error { return TrackWindow(ctx, tx, s, cust, m.ID, "f_"+agg, since) }); err != nil {
			t.Fatal(err)
		}
		for range 60 {
			at := since.Add(-6 * time.Hour).Add(time.Duration(r.Int64N(int64(5 * 24 * time.Hour))))
			ids[agg] = append(ids[agg], ingestAt(t, g, db, s, "w_"+agg, cust, r.Int64N(50), at, now).ID)
		}
	}
	for _, agg := range []string{Sum, Count, Max, Last} {
		for _, i := range r.Perm(60)[:25] {
			if _, err := Cancel(ctx, db, s, ids[agg][i], now); err != nil {
				t.Fatal(err)
			}
		}
		var got, want Window
		if err := db.GetContext(ctx, &got, `SELECT since, event_count, value_sum, value_max, last_value, last_at FROM usage_windows
			WHERE merchant_id = $1 AND owner = $2`, s.MerchantID, "f_"+agg); err != nil {
			t.Fatal(err)
		}
		if err := db.GetContext(ctx, &want, `SELECT $3::timestamptz AS since, count(*) AS event_count, coalesce(sum(value), 0)::text AS value_sum,
				max(value) AS value_max, (array_agg(value ORDER BY event_timestamp DESC, id DESC))[1] AS last_value, max(event_timestamp) AS last_at
			FROM meter_events WHERE merchant_id = $1 AND meter_id = $2 AND event_timestamp >= $3 AND cancelled_at IS NULL`,
			s.MerchantID, meters[agg].ID, since); err != nil {
			t.Fatal(err)
		}
		if got.Used(agg) != want.Used(agg) || got.Count != want.Count || got.Sum != want.Sum || !sameInt(got.Max, want.Max) || !sameInt(got.Last, want.Last) {
			t.Errorf("%s window %+v, the events give %+v", agg, got, want)
		}

		var spans []Span
		for range 20 {
			from := since.Add(time.Duration(r.Int64N(int64(4*24*time.Hour))) - 12*time.Hour)
			spans = append(spans, Span{Scope: s, CustomerID: cust, MeterID: meters[agg].ID, From: from, To: from.Add(time.Duration(r.Int64N(int64(3 * 24 * time.Hour))))})
		}
		many, err := AggregateMany(ctx, db, spans)
		if err != nil {
			t.Fatal(err)
		}
		for i, sp := range spans {
			one, err := Aggregate(ctx, db, s, meters[agg], cust, sp.From, sp.To)
			if err != nil {
				t.Fatal(err)
			}
			if many[i].Value(agg) != one.Value(agg) || many[i].Count != one.Count {
				t.Errorf("%s span %v–%v: AggregateMany %s (%d events), Aggregate %s (%d)", agg, sp.From, sp.To, many[i].Value(agg), many[i].Count, one.Value(agg), one.Count)
			}
		}
	}
}

func sameInt(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

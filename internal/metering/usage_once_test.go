package metering

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// A summary whose from is given is one statement, by the meter's id or
// key, with raw ends or without; a missing customer or meter still gets
// its own code.
func TestUsageSummaryIsOneStatement(t *testing.T) {
	// A statement is traced when it is prepared (once per pool) or run
	// unprepared, so the texts traced on a pool of its own, which runs
	// nothing but the summaries, are every statement they ran. The setup
	// and the ingestion run on another pool: a statement a transaction
	// first runs unprepared is prepared in the background, and would be
	// traced whenever that happens to run.
	var mu sync.Mutex
	ran := map[string]bool{}
	url := testdb.New(t)
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	traced, err := store.OpenConfig(ctx, url, store.Config{Trace: func(q string) {
		mu.Lock()
		ran[q] = true
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traced.Close() })
	s := tenant.Scope{MerchantID: "mer_once", Mode: tenant.Test}
	for _, q := range []string{`INSERT INTO merchants (id, name) VALUES ('mer_once', 'once')`,
		`INSERT INTO customers (merchant_id, mode, id) VALUES ('mer_once', 'test', 'cus_o')`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	m, _, err := Create(ctx, db, s, Input{Key: "calls", DisplayName: "Calls", Aggregation: Last}, now.Add(-40*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	g := NewIngester()
	ingestAt(t, g, db, s, "calls", "cus_o", 7, now.Add(-50*time.Hour), now)
	ingestAt(t, g, db, s, "calls", "cus_o", 3, now.Add(-time.Minute), now)
	from := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	day := time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ref     string
		to      time.Time
		want    string
		windows int
	}{{m.ID, day, "7", 14}, {"calls", day, "7", 14}, {"calls", now, "3", 15}} {
		in := UsageInput{Meter: c.ref, From: &from, To: &c.to, Window: Day}
		u, err := Usage(ctx, traced, s, "cus_o", in, now)
		if err != nil || u.Value != c.want || u.Meter.ID != m.ID || u.Meter.Aggregation != Last || len(u.Windows) != c.windows {
			t.Fatalf("%s to %s: %+v %v, want %s", c.ref, c.to, u, err, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 || !ran[usageOnceSQL] || !ran[usageOnceRawSQL] {
		t.Errorf("the summaries ran %d statements, want the two forms of one:\n%v", len(ran), ran)
	}
	for _, c := range []struct {
		cust, ref string
		code      apperr.Code
	}{{"cus_nope", "calls", apperr.UnknownCustomer}, {"cus_o", "nope", apperr.UnknownMeter}, {"cus_nope", "nope", apperr.UnknownCustomer}} {
		if _, err := Usage(ctx, db, s, c.cust, UsageInput{Meter: c.ref, From: &from}, now); apperr.CodeOf(err) != c.code {
			t.Errorf("%s %s: %v, want %s", c.cust, c.ref, err, c.code)
		}
	}
}

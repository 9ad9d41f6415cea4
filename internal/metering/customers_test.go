package metering

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A batch whose external ids were all resolved by an earlier committed
// batch skips their lookup: it gets the same customers, makes no new one,
// and still waits for the usage lock while a window is being made. A
// customer upserted by a transaction that rolled back is not remembered.
func TestRememberedCustomers(t *testing.T) {
	db, s, _ := fixture(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 15, 12, 30, 0, 0, time.UTC)
	g := NewIngester()
	m, _, err := Create(ctx, db, s, Input{Key: "remembered", DisplayName: "remembered", Aggregation: Sum}, now.Add(-40*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	batch := func(exts ...string) []EventInput {
		var ins []EventInput
		for _, x := range exts {
			v, at, ext := int64(1), now.Add(-time.Minute), x
			ins = append(ins, EventInput{EventName: m.Key, Value: &v, ExternalCustomerID: &ext, Timestamp: &at})
		}
		return ins
	}
	customerOf := func(res []Result) []string {
		t.Helper()
		var out []string
		for i, r := range res {
			if r.Err != nil || r.Event.CustomerID == nil {
				t.Fatalf("event %d: %v", i, r.Err)
			}
			out = append(out, *r.Event.CustomerID)
		}
		return out
	}

	// Rolled back: nothing remembered, nothing stored.
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := g.IngestTx(ctx, tx, s, batch("gone"), now); err != nil {
			return err
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatal(err)
	}
	if _, ok := g.customer(s, "gone"); ok {
		t.Fatal("a customer of a rolled-back transaction is remembered")
	}

	first, err := g.Ingest(ctx, db, s, batch("ext_a", "ext_b", "ext_a"), now)
	if err != nil {
		t.Fatal(err)
	}
	a := customerOf(first)
	if a[0] != a[2] || a[0] == a[1] {
		t.Fatalf("customers %v: want the first and third the same, the second another", a)
	}
	if cid, ok := g.customer(s, "ext_b"); !ok || cid != a[1] {
		t.Fatalf("ext_b remembered as %q (%v), want %s", cid, ok, a[1])
	}
	again, err := g.Ingest(ctx, db, s, batch("ext_b", "ext_a"), now)
	if err != nil {
		t.Fatal(err)
	}
	if b := customerOf(again); b[0] != a[1] || b[1] != a[0] {
		t.Fatalf("second batch's customers %v, want %s and %s", b, a[1], a[0])
	}
	// Another Ingester (another replica) finds the same customers.
	other, err := NewIngester().Ingest(ctx, db, s, batch("ext_a", "gone"), now)
	if err != nil {
		t.Fatal(err)
	}
	if c := customerOf(other); c[0] != a[0] {
		t.Fatalf("another ingester's customer %s, want %s", c[0], a[0])
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM customers WHERE merchant_id = $1 AND external_customer_id IS NOT NULL`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d customers with an external id, want 3 (ext_a, ext_b, gone)", n)
	}

	// A window being made holds the usage lock exclusively: the batch of
	// remembered customers waits for it, then counts in it.
	cust := a[0]
	started, release, tracked := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		tracked <- db.InTx(ctx, func(tx *store.Tx) error {
			err := TrackWindow(ctx, tx, s, cust, m.ID, "feat_remembered", now.Add(-24*time.Hour))
			close(started)
			<-release
			return err
		})
	}()
	<-started
	ingested := make(chan error, 1)
	go func() {
		_, err := g.Ingest(ctx, db, s, batch("ext_a"), now)
		ingested <- err
	}()
	waitForLockWaiter(t, db)
	select {
	case err := <-ingested:
		t.Fatalf("the batch did not wait for the window (%v)", err)
	default:
	}
	close(release)
	if err := <-tracked; err != nil {
		t.Fatal(err)
	}
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
	var w Window
	if err := db.GetContext(ctx, &w, `SELECT since, event_count, value_sum FROM usage_windows
		WHERE merchant_id = $1 AND owner = 'feat_remembered'`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	// ext_a's events: two in the first batch, one in the second, one by
	// the other ingester, one now.
	if w.Count != 5 {
		t.Errorf("window holds %d events, want 5", w.Count)
	}
}

type rollback struct{}

func (rollback) Error() string { return "rolled back on purpose" }

var errRollback error = rollback{}

// waitForLockWaiter polls until a session waits for an advisory lock.
func waitForLockWaiter(t *testing.T, db *store.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var waiting bool
		if err := db.GetContext(context.Background(), &waiting,
			`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no session came to wait for an advisory lock")
}

// BenchmarkRememberedCustomers looks up the 500 external ids of a batch
// among 1,000 remembered customers.
func BenchmarkRememberedCustomers(b *testing.B) {
	g := NewIngester()
	s := tenant.Scope{MerchantID: "mer_0123456789abcdefABCDEFGH", Mode: tenant.Test}
	m := map[string]string{}
	var exts []string
	for i := range 1000 {
		x := fmt.Sprintf("cust-%04d", i)
		m[x] = "cus_" + x
		exts = append(exts, x)
	}
	g.rememberCustomers(s, m)
	b.ReportAllocs()
	for b.Loop() {
		known := g.customers(s)
		for _, x := range exts[:500] {
			if _, ok := known(x); !ok {
				b.Fatal(x)
			}
		}
	}
}

// A remembered customer is found in its scope only, and the cache starts
// over, every scope's, once it holds maxCachedCustomers.
func TestRememberedCustomersStayInTheirScope(t *testing.T) {
	g := NewIngester()
	test := tenant.Scope{MerchantID: "mer_a", Mode: tenant.Test}
	for _, other := range []tenant.Scope{{MerchantID: "mer_a", Mode: tenant.Live}, {MerchantID: "mer_b", Mode: tenant.Test}} {
		g.rememberCustomers(test, map[string]string{"x": "cus_1"})
		if cid, ok := g.customers(test)("x"); !ok || cid != "cus_1" {
			t.Fatalf("in its scope: %q %v", cid, ok)
		}
		if cid, ok := g.customers(other)("x"); ok {
			t.Errorf("found in %+v: %q", other, cid)
		}
	}
	g.custSize.Store(maxCachedCustomers)
	g.rememberCustomers(tenant.Scope{MerchantID: "mer_b", Mode: tenant.Test}, map[string]string{"y": "cus_2"})
	if _, ok := g.customers(test)("x"); ok {
		t.Error("still remembered past the bound")
	}
	if cid, ok := g.customers(tenant.Scope{MerchantID: "mer_b", Mode: tenant.Test})("y"); !ok || cid != "cus_2" {
		t.Errorf("the customer remembered past the bound: %q %v", cid, ok)
	}
}

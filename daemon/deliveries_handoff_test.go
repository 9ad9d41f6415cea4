package daemon_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// claimLog records, in the test's database, every write that numbers a
// delivery's next attempt: what a claim does, and recording an answer
// never does.
const claimLog = `CREATE TABLE test_claims (delivery_id text NOT NULL, attempts int NOT NULL);
	CREATE FUNCTION test_log_claim() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO test_claims VALUES (NEW.id, NEW.attempts);
		RETURN NULL;
	END $$;
	CREATE TRIGGER test_log_claim AFTER UPDATE ON webhook_deliveries
		FOR EACH ROW WHEN (NEW.attempts > OLD.attempts) EXECUTE FUNCTION test_log_claim()`

// claimsOf counts the claims of a delivery (claimLog).
func claimsOf(t *testing.T, db *store.DB, deliveryID string) int {
	t.Helper()
	var n int
	if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM test_claims WHERE delivery_id = $1`, deliveryID); err != nil {
		t.Fatal(err)
	}
	return n
}

// Once an endpoint has answered in time, a credit grant's delivery is
// handed to the deliverer by the transaction that wrote it and sent with
// no claim; the first one, to an endpoint not yet proven, is claimed. The
// handed-off attempt is signed, numbered 1 and carries the event as the
// API shows it, and its answer is on record.
func TestHandedOffDeliveryIsSentWithoutAClaim(t *testing.T) {
	t.Parallel()
	stmts := &testdb.Statements{}
	db := testdb.OpenConfig(t, store.Config{Trace: stmts.Record})
	t.Cleanup(func() { stmts.Check(t, db) })
	if _, err := db.ExecContext(context.Background(), claimLog); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, db, "", insecure)
	b := &bundle{t: t, db: db, d: d, url: d.URL}
	ctx := context.Background()
	rc := newReceiver(t, nil)
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	ep := b.endpoint(m, rc.URL)
	c := b.client(key)

	grant := func(n int) string {
		t.Helper()
		if _, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000", ExternalCustomerID: "u1"}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the grant's delivery", func() bool { return rc.Count() == n })
		return lastGrantEvent(t, db, m)
	}
	first := settled(t, db, grant(1), 10*time.Second)
	if n := claimsOf(t, db, first[0].ID); n != 1 {
		t.Fatalf("the first delivery, to an endpoint not yet proven, was claimed %d times, want once", n)
	}

	evID := grant(2)
	ds := settled(t, db, evID, 10*time.Second)
	if len(ds) == 1 && claimsOf(t, db, ds[0].ID) != 0 {
		t.Errorf("the handed-off delivery was claimed")
	}
	if len(ds) != 1 || ds[0].Status != "succeeded" || ds[0].Attempts != 1 {
		t.Fatalf("deliveries %+v, want one succeeded at its first attempt", ds)
	}
	as := attemptsOf(t, db, ds[0].ID)
	if len(as) != 1 || as[0].Attempt != 1 || as[0].Status == nil || *as[0].Status != 200 {
		t.Errorf("attempts on record %+v, want attempt 1 answered 200", as)
	}
	h := rc.Got()[1]
	if h.Attempt() != 1 || h.Header.Get("wc-delivery-id") != ds[0].ID {
		t.Errorf("got attempt %d of %s, want attempt 1 of %s", h.Attempt(), h.Header.Get("wc-delivery-id"), ds[0].ID)
	}
	if err := webhook.Verify(h.Body, h.Header.Get(webhook.HeaderName), ep.Secret, time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	ev, err := events.Get(ctx, db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, evID)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	wire, _ := json.Marshal(ev.Wire())
	if err := json.Unmarshal(wire, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(h.Body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handed-off body %s, want the event as the API shows it: %s", h.Body, wire)
	}
}

// lastGrantEvent returns the id of the merchant's latest credit.granted
// event.
func lastGrantEvent(t *testing.T, db *store.DB, merchantID string) string {
	t.Helper()
	var id string
	if err := db.GetContext(context.Background(), &id, `SELECT id FROM events WHERE merchant_id = $1 AND type = 'credit.granted'
		ORDER BY seq DESC LIMIT 1`, merchantID); err != nil {
		t.Fatalf("the grant's event: %v", err)
	}
	return id
}

// deadHandoff stands for a replica that leased deliveries as they were
// inserted and died after the commit, before sending them.
type deadHandoff struct {
	endpoint string
	lease    time.Duration
	started  atomic.Int64
}

func (h *deadHandoff) Reserve(string, int) events.Reservation {
	return events.Reservation{Endpoints: []string{h.endpoint}, Room: []int64{1}, Lease: h.lease, At: time.Now()}
}
func (h *deadHandoff) Start(_ events.Reservation, leased []events.Leased) {
	h.started.Add(int64(len(leased)))
}
func (h *deadHandoff) Release(events.Reservation) {}

// A delivery handed off by a replica that died before sending it stays
// leased, claimed by no one, until its lease runs out; then a live daemon
// claims it, records the lost attempt as interrupted and makes the next.
func TestDeliveryLeftByADeadHandoffResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.New(t)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, db: db}
	m := b.merchant("acme")
	rc := newReceiver(t, nil)
	ep := b.endpoint(m, rc.URL)
	dead := &deadHandoff{endpoint: ep.ID, lease: daemon.DeliveryPoll / 2}
	db.Provide(events.HandoffName, dead)
	ext := "u1"
	if _, err := credits.Grant(ctx, db, tenant.Scope{MerchantID: m, Mode: tenant.Test},
		credits.GrantInput{Customer: customers.Ref{ExternalID: &ext}, Amount: 1000}, time.Now()); err != nil {
		t.Fatal(err)
	}
	db.Provide(events.HandoffName, nil)
	if dead.started.Load() != 1 {
		t.Fatalf("%d deliveries handed off, want 1", dead.started.Load())
	}
	var row struct {
		ID       string    `db:"id"`
		Attempts int       `db:"attempts"`
		Until    time.Time `db:"leased_until"`
	}
	if err := db.GetContext(ctx, &row, `SELECT id, attempts, leased_until FROM webhook_deliveries WHERE merchant_id = $1`, m); err != nil {
		t.Fatal(err)
	}
	if row.Attempts != 1 {
		t.Fatalf("handed-off delivery at attempt %d, want 1", row.Attempts)
	}

	startDaemon(t, db, url, insecure)
	eventually(t, dead.lease+daemon.DeliveryPoll+10*time.Second, "the delivery attempted again", func() bool { return rc.Count() > 0 })
	h := rc.Got()[0]
	if h.Attempt() != 2 || h.Header.Get("wc-delivery-id") != row.ID {
		t.Fatalf("got attempt %d of %s, want attempt 2 of %s", h.Attempt(), h.Header.Get("wc-delivery-id"), row.ID)
	}
	if h.At.Before(row.Until) {
		t.Errorf("attempted again at %v, under the lease (until %v)", h.At, row.Until)
	}
	eventually(t, 10*time.Second, "the attempts on record", func() bool { return len(attemptsOf(t, db, row.ID)) == 2 })
	as := attemptsOf(t, db, row.ID)
	if as[0].Error == nil || as[1].Status == nil || *as[1].Status != 200 {
		t.Errorf("attempts on record: %+v; want the interrupted one and a 200", as)
	}
}

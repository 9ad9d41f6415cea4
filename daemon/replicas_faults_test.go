package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// Two `tollgate serve` replicas on one database, clients alternating
// between them, under usage ingestion, credit grants and debits, renewals
// at a test-clock advance, webhook deliveries and a usage alert. One
// replica at a time is killed with SIGKILL and restarted, several times,
// while the load runs. Afterwards: every acknowledged write is stored
// exactly once, the credit ledger balances, each subscription is charged
// once for its period, each alert fires once, no delivery is attempted
// twice at once, and every attempt a dead replica held is made again once
// its lease has run out. TOLLGATE_REPLICA_KILLS sets the number of kills
// (4 by default), for a larger sample of the figures it logs.
func TestReplicasUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two tollgate binaries")
	}
	t.Parallel()
	kills := 4
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_REPLICA_KILLS")); err == nil && v > 0 {
		kills = v
	}
	ctx := context.Background()
	dbURL := testdb.New(t)
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &bundle{t: t, db: db}
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	rc := newTimingReceiver(t)
	b.endpoint(m, rc.url+"/hooks")

	bin := tollgateBinary(t)
	args := []string{"--rate-limits=false", "--allow-insecure-webhooks", "--webhook-retry-schedule", "200ms,200ms,200ms,200ms"}
	set := &replicaSet{procs: make([]*exec.Cmd, 2), urls: make([]string, 2)}
	for i := range 2 {
		p, url := serveProcessURL(t, bin, dbURL, args...)
		set.set(i, p, url)
	}
	lc := &loadClient{t: t, set: set, key: key, http: &http.Client{Timeout: 30 * time.Second}}

	// Before the faults: a meter, an alert on it, and subscriptions whose
	// first period the clock advance below ends.
	c := client.New(set.pick(), key, client.WithMaxRetries(0))
	meter, err := c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "sum"})
	if err != nil {
		t.Fatal(err)
	}
	// Each customer's usage crosses it within the first seconds of load.
	if _, err := c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: meter.ID, Threshold: "40"}); err != nil {
		t.Fatal(err)
	}
	const subs = 20
	subscribeMany(t, c, subs)
	clock, err := c.GetTestClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	renewAt := clock.Now.Add(7*24*time.Hour + time.Hour).UTC()

	// The load: workers send writes with idempotency keys of their own,
	// noting each acknowledged one. Each credit customer gets a first grant
	// (a debit needs an account).
	var mu sync.Mutex
	usage := map[string]int64{} // acknowledged meter event key → value
	ops := map[string]string{}  // acknowledged credit operation key → kind
	const creditCustomers = 7
	for i := range creditCustomers {
		p := client.CreditGrantParams{Amount: "1000", ExternalCustomerID: fmt.Sprintf("cr%d", i), IdempotencyKey: fmt.Sprintf("gr-first-%d", i)}
		if _, err := c.GrantCredits(ctx, p); err != nil {
			t.Fatal(err)
		}
		ops[p.IdempotencyKey] = "grant"
	}
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for w := range 6 {
		workers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%d", w, i)
				switch i % 3 {
				case 0:
					v := int64(i%5 + 1)
					p := client.MeterEventParams{EventName: "calls", ExternalCustomerID: fmt.Sprintf("u%d", i%10), Value: strconv.FormatInt(v, 10), IdempotencyKey: "ev-" + k}
					if lc.do("meter event "+k, func(c *client.Client) error { _, err := c.SendMeterEvent(ctx, p); return err }) {
						mu.Lock()
						usage[p.IdempotencyKey] = v
						mu.Unlock()
					}
				case 1:
					p := client.CreditGrantParams{Amount: "1000", ExternalCustomerID: fmt.Sprintf("cr%d", i%creditCustomers), IdempotencyKey: "gr-" + k}
					if lc.do("grant "+k, func(c *client.Client) error { _, err := c.GrantCredits(ctx, p); return err }) {
						mu.Lock()
						ops[p.IdempotencyKey] = "grant"
						mu.Unlock()
					}
				case 2:
					// More than a grant: some debits find the balance short.
					p := client.CreditDebitParams{Amount: "1300", ExternalCustomerID: fmt.Sprintf("cr%d", (i+3)%creditCustomers), IdempotencyKey: "db-" + k}
					if lc.do("debit "+k, func(c *client.Client) error { _, err := c.DebitCredits(ctx, p); return err }) {
						mu.Lock()
						ops[p.IdempotencyKey] = "debit"
						mu.Unlock()
					}
				}
			}
		})
	}

	// The faults: each time enough writes went through since the last
	// restart and the receiver holds an attempt, kill a replica (each in
	// turn) and start another in its place. The clock advance runs during
	// the second round, so renewals meet a kill too.
	var advanced sync.WaitGroup
	killedAt := make([]time.Time, 0, kills)
	for k := range kills {
		if k == 1 {
			advanced.Go(func() {
				lc.do("clock advance", func(c *client.Client) error {
					_, err := c.AdvanceTestClock(ctx, client.TestClockAdvanceParams{To: &renewAt})
					return err
				})
			})
		}
		since := lc.acked.Load()
		eventually(t, 60*time.Second, "load and an attempt in flight before a kill", func() bool {
			return lc.acked.Load() >= since+150 && rc.inFlight.Load() > 0
		})
		victim := k % 2
		p := set.proc(victim)
		if err := p.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.Wait()
		killedAt = append(killedAt, time.Now())
		p, url := serveProcessURL(t, bin, dbURL, args...)
		set.set(victim, p, url)
	}
	since := lc.acked.Load()
	eventually(t, 60*time.Second, "load after the last restart", func() bool { return lc.acked.Load() >= since+150 })
	close(stop)
	workers.Wait()
	advanced.Wait()
	if t.Failed() {
		t.FailNow()
	}
	eventually(t, 2*(daemon.DeliveryLease+daemon.DeliveryPoll)+30*time.Second, "every delivery settled", func() bool {
		var n int
		_ = db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`)
		return n == 0
	})

	checkAcknowledged(t, db, usage, ops)
	checkLedger(t, db)
	checkRenewedOnce(t, db, subs)
	checkAlertsOnce(t, db, m)
	f := rc.figures(killedAt)
	dbResume := resumeGapOnRecord(t, db)
	for _, id := range f.overlaps {
		t.Errorf("delivery %s: an attempt started before the previous one ended", id)
	}
	for _, id := range f.unresumed {
		t.Errorf("delivery %s: its last attempt was cut by a dying replica and never made again", id)
	}
	var failed int
	if err := db.Get(&failed, `SELECT count(*) FROM webhook_deliveries WHERE status <> 'succeeded'`); err != nil || failed != 0 {
		t.Errorf("%d deliveries did not succeed (%v)", failed, err)
	}
	resume := max(f.maxResume, dbResume)
	if f.cut == 0 && dbResume == 0 {
		t.Error("no attempt was in flight on a killed replica: the test proved nothing about resuming")
	}
	// The lease is the promise; a poll of the queue finds the row once it
	// has run out. The slack is for a machine under load.
	if limit := daemon.DeliveryLease + daemon.DeliveryPoll + 10*time.Second; resume > limit {
		t.Errorf("an attempt a dead replica held was made again only after %v (lease %v, poll %v)", resume, daemon.DeliveryLease, daemon.DeliveryPoll)
	}
	t.Logf("%d kills; %d writes acknowledged (%d after a retry on the other replica); %d deliveries, %d requests; "+
		"%d attempts cut by a kill; %d deliveries POSTed again after a 2xx (%.4f%%), their 2xx written %v before a kill; longest wait to resume %v (lease %v)",
		kills, lc.acked.Load(), lc.retried.Load(), f.deliveries, f.requests, f.cut, f.resent,
		100*float64(f.resent)/float64(max(f.deliveries, 1)), f.resentAges, resume.Round(time.Millisecond), daemon.DeliveryLease)
}

// checkAcknowledged asserts every acknowledged write is stored exactly
// once.
func checkAcknowledged(t *testing.T, db *store.DB, usage map[string]int64, ops map[string]string) {
	t.Helper()
	var events []struct {
		Key   string `db:"idempotency_key"`
		N     int    `db:"n"`
		Value int64  `db:"value"`
	}
	if err := db.Select(&events, `SELECT idempotency_key, count(*) AS n, sum(value) AS value FROM meter_events
		WHERE idempotency_key IS NOT NULL GROUP BY idempotency_key`); err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, e := range events {
		stored[e.Key] = true
		if v, ok := usage[e.Key]; ok && (e.N != 1 || e.Value != v) {
			t.Errorf("meter event %s: stored %d times, value %d; acknowledged once, value %d", e.Key, e.N, e.Value, v)
		}
	}
	var credit []struct {
		Key  string `db:"idempotency_key"`
		N    int    `db:"n"`
		Kind string `db:"kind"`
	}
	if err := db.Select(&credit, `SELECT idempotency_key, count(*) AS n, min(kind) AS kind FROM credit_operations
		WHERE idempotency_key IS NOT NULL GROUP BY idempotency_key`); err != nil {
		t.Fatal(err)
	}
	for _, o := range credit {
		stored[o.Key] = true
		if kind, ok := ops[o.Key]; ok && (o.N != 1 || o.Kind != kind) {
			t.Errorf("credit %s %s: stored %d times as %s", kind, o.Key, o.N, o.Kind)
		}
	}
	lost := 0
	for k := range usage {
		if !stored[k] {
			lost++
		}
	}
	for k := range ops {
		if !stored[k] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d acknowledged writes of %d are not stored", lost, len(usage)+len(ops))
	}
}

// checkLedger asserts the bank invariant: each credit balance equals the
// sum of its ledger entries (and of its grants' remainders, less its debt),
// and no balance went below zero (no debit here allows it).
func checkLedger(t *testing.T, db *store.DB) {
	t.Helper()
	var bad []string
	err := db.Select(&bad, `SELECT a.id || ': balance ' || a.balance || ', debt ' || a.debt || ', entries ' || e.total || ', remainders ' || g.remaining
		FROM credit_accounts a
		CROSS JOIN LATERAL (SELECT coalesce(sum(amount), 0) AS total FROM credit_entries x
			WHERE x.merchant_id = a.merchant_id AND x.account_id = a.id) e
		CROSS JOIN LATERAL (SELECT coalesce(sum(remaining), 0) AS remaining FROM credit_grant_balances x
			WHERE x.merchant_id = a.merchant_id AND x.account_id = a.id) g
		WHERE a.balance <> e.total OR g.remaining - a.debt <> a.balance OR a.balance < 0 OR a.debt <> 0`)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("credit account %s", b)
	}
	var shortfalls int
	_ = db.Get(&shortfalls, `SELECT count(*) FROM credit_operations WHERE kind = 'debit' AND covered < amount`)
	if shortfalls == 0 {
		t.Error("no debit found the balance short: the test did not try an overdraft")
	}
}

// checkAlertsOnce asserts no alert fired twice for one customer and period,
// and each firing has exactly one event.
func checkAlertsOnce(t *testing.T, db *store.DB, merchantID string) {
	t.Helper()
	seen := map[string]int{}
	for _, tr := range triggersOf(t, db, merchantID) {
		k := tr.AlertID + " " + deref(tr.CustomerID) + " " + deref(tr.PeriodStart)
		seen[k]++
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("alert %s fired %d times", k, n)
		}
	}
	var firings int
	if err := db.Get(&firings, `SELECT count(*) FROM alert_firings WHERE merchant_id = $1`, merchantID); err != nil {
		t.Fatal(err)
	}
	if firings == 0 || firings != len(seen) {
		t.Errorf("%d firings on record, %d distinct alert.triggered events", firings, len(seen))
	}
}

// resumeGapOnRecord is the longest wait, on record, between an attempt
// recorded as interrupted (its replica died holding it) and the next
// attempt of its delivery.
func resumeGapOnRecord(t *testing.T, db *store.DB) time.Duration {
	t.Helper()
	var us *int64
	err := db.Get(&us, `SELECT max(extract(epoch FROM n.started_at - a.started_at) * 1e6)::bigint
		FROM webhook_attempts a JOIN webhook_attempts n ON n.merchant_id = a.merchant_id AND n.delivery_id = a.delivery_id AND n.attempt = a.attempt + 1
		WHERE a.error LIKE 'no answer recorded%'`)
	if err != nil {
		t.Fatal(err)
	}
	if us == nil {
		return 0
	}
	return time.Duration(*us) * time.Microsecond
}

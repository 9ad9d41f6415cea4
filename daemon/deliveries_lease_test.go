package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// A delivery whose attempt a dead replica held (claimed under a lease, the
// replica killed before it answered) is attempted again by a live daemon
// when the lease runs out: not before, and not at the worker's next poll.
// The daemon starts after the claim, so its worker finds nothing claimable
// and sleeps: until the lease's end, or, were it blind to leases, a whole
// poll. The bound, the lease's end plus a margin, is shorter than that
// poll, so only a worker that wakes at the lease's end keeps to it.
func TestDeliveryLeftByADeadReplicaResumesAtTheLeaseEnd(t *testing.T) {
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
	ep := b.endpoint(m, rc.URL+"/hooks")
	ev := emit(t, db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{"n": 1})

	// The dead replica's claim: attempt 1, leased, never sent nor recorded.
	lease := daemon.DeliveryPoll * 2 / 5
	margin := daemon.DeliveryPoll * 2 / 5
	room := func([]string) map[string]int { return map[string]int{ep.ID: 1} }
	jobs, err := webhooks.Claim(ctx, db, 1, nil, room, lease)
	if err != nil || len(jobs) != 1 || jobs[0].EventID != ev.ID {
		t.Fatalf("claimed %+v, %v; want the event's delivery", jobs, err)
	}
	var until time.Time
	if err := db.GetContext(ctx, &until, `SELECT leased_until FROM webhook_deliveries WHERE merchant_id = $1 AND id = $2`,
		m, jobs[0].ID); err != nil {
		t.Fatal(err)
	}

	startDaemon(t, db, url, insecure)
	eventually(t, lease+daemon.DeliveryPoll+10*time.Second, "the delivery attempted again", func() bool { return rc.Count() > 0 })
	h := rc.Got()[0]
	if h.Attempt() != 2 || h.Header.Get("wc-delivery-id") != jobs[0].ID {
		t.Fatalf("got attempt %d of %s, want attempt 2 of %s", h.Attempt(), h.Header.Get("wc-delivery-id"), jobs[0].ID)
	}
	if h.At.Before(until) {
		t.Errorf("attempted again at %v, under the lease (until %v)", h.At, until)
	}
	if late := h.At.Sub(until); late > margin {
		t.Errorf("attempted again %v after the lease ran out (lease %v, poll %v), want at most %v", late, lease, daemon.DeliveryPoll, margin)
	}
	ds := settled(t, db, ev.ID, 10*time.Second)
	as := attemptsOf(t, db, ds[0].ID)
	if len(as) != 2 || as[0].Error == nil || as[1].Status == nil || *as[1].Status != 200 {
		t.Errorf("attempts on record: %+v; want the interrupted one and a 200", as)
	}
}

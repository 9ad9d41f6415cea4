package daemon_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/partitions"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

func TestDeliverySignedAndAcknowledged(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	rc.Reply = "thanks"
	m := b.merchant("acme")
	ep := b.endpoint(m, rc.URL+"/hooks")
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{"id": "inv_1", "amount": "9000000"})

	ds := settled(t, b.db, ev.ID, 10*time.Second)
	if len(ds) != 1 || ds[0].Status != webhooks.StatusSucceeded || ds[0].Attempts != 1 || ds[0].EndpointID != ep.ID {
		t.Fatalf("deliveries %+v", ds)
	}
	hooks := rc.Got()
	if len(hooks) != 1 {
		t.Fatalf("%d requests, want 1", len(hooks))
	}
	h := hooks[0]
	if err := webhook.Verify(h.Body, h.Header.Get("x-wc-signature"), ep.Secret, 0); err != nil {
		t.Errorf("signature: %v (header %q)", err, h.Header.Get("x-wc-signature"))
	}
	for name, want := range map[string]string{
		"wc-event-type": "invoice.paid", "wc-event-id": ev.ID, "wc-delivery-id": ds[0].ID,
		"wc-delivery-attempt": "1", "Content-Type": "application/json",
	} {
		if got := h.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if !strings.HasPrefix(h.Header.Get("User-Agent"), "tollgate-webhooks/") {
		t.Errorf("User-Agent %q", h.Header.Get("User-Agent"))
	}
	body := h.Event(t)
	data, _ := body["data"].(map[string]any)
	if body["id"] != ev.ID || body["object"] != "event" || body["type"] != "invoice.paid" || body["livemode"] != false ||
		data["amount"] != "9000000" || body["created_at"] == nil {
		t.Errorf("body %s", h.Body)
	}
	as := attemptsOf(t, b.db, ds[0].ID)
	if len(as) != 1 || as[0].Status == nil || *as[0].Status != 200 || as[0].ResponseBody != "thanks" || as[0].Error != nil || as[0].LatencyUS <= 0 {
		t.Errorf("attempts %+v", as)
	}
}

func TestDeliveryExactlyFiveAttemptsThenFailed(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	rc.Status = func(int, hook) int { return 500 }
	rc.Reply = strings.Repeat("x", 5000)
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})

	ds := settled(t, b.db, ev.ID, 10*time.Second)
	if ds[0].Status != webhooks.StatusFailed || ds[0].Attempts != 5 || ds[0].LastStatus == nil || *ds[0].LastStatus != 500 {
		t.Fatalf("delivery %+v", ds[0])
	}
	as := attemptsOf(t, b.db, ds[0].ID)
	if len(as) != 5 {
		t.Fatalf("%d attempts recorded, want 5", len(as))
	}
	for i, a := range as {
		if a.Attempt != i+1 || a.Status == nil || *a.Status != 500 || len(a.ResponseBody) != webhooks.MaxResponseBody {
			t.Errorf("attempt %d: %d status %v, %d body bytes", i, a.Attempt, a.Status, len(a.ResponseBody))
		}
	}
	// Nothing is sent after the last attempt.
	time.Sleep(150 * time.Millisecond)
	hooks := rc.Got()
	if len(hooks) != 5 {
		t.Fatalf("receiver got %d requests, want 5", len(hooks))
	}
	for i, h := range hooks {
		if h.Attempt() != i+1 {
			t.Errorf("request %d has attempt %d", i, h.Attempt())
		}
		if i > 0 && h.At.Sub(hooks[i-1].At) < fastRetries[i-1] {
			t.Errorf("attempt %d came %v after the previous, before the %v delay", i+1, h.At.Sub(hooks[i-1].At), fastRetries[i-1])
		}
	}
}

func TestDelivery2xxStopsRetries(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	rc.Status = func(n int, _ hook) int {
		switch n {
		case 1:
			return 503
		case 2:
			return 302
		}
		return 202
	}
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 10*time.Second)
	if ds[0].Status != webhooks.StatusSucceeded || ds[0].Attempts != 3 {
		t.Fatalf("delivery %+v", ds[0])
	}
	time.Sleep(150 * time.Millisecond)
	if n := rc.Count(); n != 3 {
		t.Fatalf("receiver got %d requests, want 3 (a redirect is a failure, never followed)", n)
	}
}

// Every attempt is signed afresh: a retry a second later carries a later t.
func TestDeliveryRetryIsResigned(t *testing.T) {
	t.Parallel()
	b := setupListening(t, func(c *daemon.Config) {
		c.AllowInsecureWebhooks = true
		c.WebhookRetrySchedule = []time.Duration{1100 * time.Millisecond}
	})
	rc := newReceiver(t, nil)
	rc.Status = func(int, hook) int { return 500 }
	m := b.merchant("acme")
	ep := b.endpoint(m, rc.URL)
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 10*time.Second)
	hooks := rc.Got()
	if ds[0].Status != webhooks.StatusFailed || len(hooks) != 2 {
		t.Fatalf("delivery %+v, %d requests; want failed after 2 attempts", ds[0], len(hooks))
	}
	h1, err1 := webhook.ParseHeader(hooks[0].Header.Get("x-wc-signature"))
	h2, err2 := webhook.ParseHeader(hooks[1].Header.Get("x-wc-signature"))
	if err1 != nil || err2 != nil || !h2.Timestamp.After(h1.Timestamp) {
		t.Fatalf("t of attempt 1 %v, of attempt 2 %v (%v %v)", h1, h2, err1, err2)
	}
	for _, h := range hooks {
		if err := webhook.Verify(h.Body, h.Header.Get("x-wc-signature"), ep.Secret, 0); err != nil {
			t.Error(err)
		}
	}
}

func TestDeliveryHTTPSWithCAFile(t *testing.T) {
	t.Parallel()
	serverTLS, caFile := testCA(t)
	rc := newReceiver(t, serverTLS)
	// Without the CA the receiver's certificate is not trusted.
	b := setupListening(t, insecure)
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 10*time.Second)
	if ds[0].Status != webhooks.StatusFailed || ds[0].LastError == nil || !strings.Contains(*ds[0].LastError, "certificate") {
		t.Fatalf("delivery without the CA: %+v", ds[0])
	}
	// With --webhook-ca-file it is.
	b2 := setupListening(t, insecure, func(c *daemon.Config) { c.WebhookCAFile = caFile })
	m2 := b2.merchant("acme")
	b2.endpoint(m2, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1))
	ev2 := emit(t, b2.db, tenant.Scope{MerchantID: m2, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds2 := settled(t, b2.db, ev2.ID, 10*time.Second)
	if ds2[0].Status != webhooks.StatusSucceeded || ds2[0].Attempts != 1 {
		t.Fatalf("delivery with the CA: %+v", ds2[0])
	}
	if rc.Count() != 1 {
		t.Fatalf("receiver got %d requests", rc.Count())
	}
}

// Without --allow-insecure-webhooks nothing reaches loopback, private,
// link-local or metadata addresses, whatever name resolves to them, and
// http:// endpoints are refused.
func TestDeliverySSRFRefusals(t *testing.T) {
	t.Parallel()
	b := setupListening(t, func(c *daemon.Config) { c.WebhookRetrySchedule = fastRetries })
	rc := newReceiver(t, nil)
	port := rc.URL[strings.LastIndex(rc.URL, ":"):]
	m := b.merchant("acme")
	urls := map[string]string{
		"https://127.0.0.1" + port + "/h":   "loopback",
		"https://localhost" + port + "/h":   "loopback",
		"https://10.0.0.1/h":                "private",
		"https://169.254.169.254/latest/":   "metadata",
		"https://[::ffff:10.1.2.3]:443/h":   "private",
		"http://127.0.0.1" + port + "/h":    "https",
		"https://[fe80::1%25lo]" + port:     "link-local",
		"https://192.168.0.10" + port + "/": "private",
	}
	byEndpoint := map[string]string{}
	for u, why := range urls {
		byEndpoint[b.endpoint(m, u).ID] = why
	}
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 15*time.Second)
	if len(ds) != len(urls) {
		t.Fatalf("%d deliveries, want %d", len(ds), len(urls))
	}
	for _, d := range ds {
		why := byEndpoint[d.EndpointID]
		if d.Status != webhooks.StatusFailed || d.Attempts != 5 || d.LastError == nil ||
			!strings.Contains(*d.LastError, "refused") || !strings.Contains(*d.LastError, why) {
			t.Errorf("%s (%s): %s after %d attempts, error %v", d.EndpointID, why, d.Status, d.Attempts, deref(d.LastError))
		}
	}
	if n := rc.Count(); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestDeliveryRotationSignsWithBothSecrets(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	m := b.merchant("acme")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	old := b.endpoint(m, rc.URL)
	ctx := context.Background()
	rotated, err := webhooks.RotateSecret(ctx, b.db, old.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Secret == old.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Fatalf("new secret %q", rotated.Secret)
	}
	settled(t, b.db, emit(t, b.db, s, "invoice.paid", map[string]any{}).ID, 10*time.Second)
	h := rc.Got()[0]
	sig := h.Header.Get("x-wc-signature")
	if strings.Count(sig, "v1=") != 2 {
		t.Fatalf("header %q: want two v1 signatures during the overlap", sig)
	}
	for _, secret := range []string{old.Secret, rotated.Secret} {
		if err := webhook.Verify(h.Body, sig, secret, 0); err != nil {
			t.Errorf("verify with %s…: %v", secret[:10], err)
		}
	}
	// Rotating with no overlap retires the previous secret at once.
	again, err := webhooks.RotateSecret(ctx, b.db, old.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	settled(t, b.db, emit(t, b.db, s, "invoice.paid", map[string]any{}).ID, 10*time.Second)
	h = rc.Got()[1]
	sig = h.Header.Get("x-wc-signature")
	if strings.Count(sig, "v1=") != 1 || webhook.Verify(h.Body, sig, again.Secret, 0) != nil ||
		!errors.Is(webhook.Verify(h.Body, sig, rotated.Secret, 0), webhook.ErrMismatch) {
		t.Fatalf("after a rotation without overlap: header %q", sig)
	}
	if _, err := webhooks.RotateSecret(ctx, b.db, "we_nope", time.Hour); err == nil {
		t.Error("rotating an unknown endpoint succeeded")
	}
}

// An endpoint gets the events of its merchant and mode, of its types, while
// enabled; removing it fails its pending deliveries.
func TestDeliveryRouting(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	ctx := context.Background()
	m, other := b.merchant("acme"), b.merchant("other")
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	paidOnly := b.endpoint(m, rc.URL+"/paid", "invoice.paid")
	all := b.endpoint(m, rc.URL+"/all")
	b.endpoint(other, rc.URL+"/other")
	_, err := webhooks.Add(ctx, b.db, webhooks.Input{MerchantID: m, Mode: tenant.Live, URL: rc.URL + "/live", AllowInsecure: true})
	if err != nil {
		t.Fatal(err)
	}
	disabled := b.endpoint(m, rc.URL+"/disabled")
	if err := webhooks.SetEnabled(ctx, b.db, disabled.ID, false); err != nil {
		t.Fatal(err)
	}
	credit := emit(t, b.db, s, "credit.granted", map[string]any{})
	paid := emit(t, b.db, s, "invoice.paid", map[string]any{})
	settled(t, b.db, credit.ID, 10*time.Second)
	settled(t, b.db, paid.ID, 10*time.Second)
	got := map[string][]string{}
	for _, h := range rc.Got() {
		got[h.Header.Get("wc-event-type")] = append(got[h.Header.Get("wc-event-type")], h.Header.Get("wc-delivery-id"))
	}
	if len(got["credit.granted"]) != 1 || len(got["invoice.paid"]) != 2 {
		t.Fatalf("deliveries by type: %v", got)
	}
	for _, d := range append(deliveriesOf(t, b.db, credit.ID), deliveriesOf(t, b.db, paid.ID)...) {
		if d.EndpointID != all.ID && d.EndpointID != paidOnly.ID || d.EndpointID == paidOnly.ID && d.EventID != paid.ID {
			t.Errorf("delivery %s of %s to %s", d.ID, d.EventID, d.EndpointID)
		}
	}

	// A delivery pending for an endpoint disabled since stays pending, and
	// fails when the endpoint is removed.
	var held events.Event
	err = b.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if held, err = events.Emit(ctx, tx, s, "credit.granted", time.Now(), map[string]any{}); err != nil {
			return err
		}
		return webhooks.SetEnabled(ctx, tx, all.ID, false)
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds := deliveriesOf(t, b.db, held.ID); len(ds) != 1 || ds[0].EndpointID != all.ID || ds[0].Status != webhooks.StatusPending || ds[0].Attempts != 0 {
		t.Fatalf("deliveries to a disabled endpoint: %+v", ds)
	}
	if err := webhooks.Remove(ctx, b.db, all.ID); err != nil {
		t.Fatal(err)
	}
	if ds := deliveriesOf(t, b.db, held.ID); ds[0].Status != webhooks.StatusFailed || deref(ds[0].LastError) != "endpoint removed" {
		t.Fatalf("after removal: %+v", ds[0])
	}
}

// A failed delivery replayed by the operator goes out again, with attempt
// numbers continuing.
func TestDeliveryManualRetry(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	var down atomic.Bool
	down.Store(true)
	rc.Status = func(int, hook) int {
		if down.Load() {
			return http.StatusBadGateway
		}
		return 200
	}
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	ev := emit(t, b.db, tenant.Scope{MerchantID: m, Mode: tenant.Test}, "invoice.paid", map[string]any{})
	ds := settled(t, b.db, ev.ID, 10*time.Second)
	if ds[0].Status != webhooks.StatusFailed {
		t.Fatalf("delivery %+v", ds[0])
	}
	down.Store(false)
	ctx := context.Background()
	ids, err := webhooks.Retry(ctx, b.db, webhooks.RetryInput{FailedSince: time.Hour})
	if err != nil || len(ids) != 1 || ids[0] != ds[0].ID {
		t.Fatalf("retry: %v %v", ids, err)
	}
	eventually(t, 10*time.Second, "retried delivery succeeds", func() bool {
		return deliveriesOf(t, b.db, ev.ID)[0].Status == webhooks.StatusSucceeded
	})
	hooks := rc.Got()
	if len(hooks) != 6 || hooks[5].Attempt() != 6 {
		t.Fatalf("%d requests, last attempt %d", len(hooks), hooks[len(hooks)-1].Attempt())
	}
	for _, in := range []webhooks.RetryInput{{}, {DeliveryID: "dlv_x", EventID: "evt_x"}, {DeliveryID: "dlv_nope"}, {EventID: "evt_nope"}} {
		if _, err := webhooks.Retry(ctx, b.db, in); err == nil {
			t.Errorf("retry %+v succeeded", in)
		}
	}
}

// A month of events past the retention goes, with its deliveries and
// attempts; a month with a delivery still pending stays.
func TestEventRetention(t *testing.T) {
	t.Parallel()
	b := setupListening(t, insecure)
	rc := newReceiver(t, nil)
	m := b.merchant("acme")
	b.endpoint(m, rc.URL)
	s := tenant.Scope{MerchantID: m, Mode: tenant.Test}
	// Months of their own in place of the migration's partition of the
	// feed as it stood (empty here: it covers every time up to next month).
	now := time.Now()
	ev := partitions.Events()
	thisMonth := ev.Start(now)
	lastMonth := "events_p" + ev.Start(thisMonth.Add(-time.Hour)).Format("20060102")
	if _, err := b.db.Exec(`DROP TABLE events_p00000000`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Exec(`SELECT partition_add('events', 'created_at', $1, $2)`, ev.Start(thisMonth.Add(-time.Hour)), thisMonth); err != nil {
		t.Fatal(err)
	}
	if _, err := partitions.Ensure(context.Background(), b.db, now); err != nil {
		t.Fatal(err)
	}
	old := emit(t, b.db, s, "invoice.paid", map[string]any{})
	recent := emit(t, b.db, s, "invoice.paid", map[string]any{})
	settled(t, b.db, old.ID, 10*time.Second)
	settled(t, b.db, recent.ID, 10*time.Second)
	// Into last month's partition.
	if _, err := b.db.Exec(`UPDATE events SET created_at = date_trunc('month', now(), 'UTC') - interval '1 day' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	// A retention that ends at the start of this month: last month is past it.
	retention := now.Sub(thisMonth)
	if _, err := b.db.Exec(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() + interval '1 day' WHERE event_id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	out, err := partitions.Drop(context.Background(), b.db, partitions.Events(), retention, now)
	if err != nil || len(out.Kept) != 1 || out.Kept[0].Name != lastMonth {
		t.Fatalf("with a pending delivery: %+v, %v", out, err)
	}
	if _, err := b.db.Exec(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE event_id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	out, err = partitions.Drop(context.Background(), b.db, partitions.Events(), retention, now)
	if err != nil || len(out.Dropped) != 1 || out.Dropped[0] != lastMonth || len(out.Kept) != 0 {
		t.Fatalf("dropped %+v: %v", out, err)
	}
	var left struct{ Events, Deliveries, Attempts int }
	_ = b.db.Get(&left, `SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM webhook_deliveries) AS deliveries,
		(SELECT count(*) FROM webhook_attempts) AS attempts`)
	if left.Events != 1 || left.Deliveries != 1 || left.Attempts != 1 {
		t.Fatalf("left %+v", left)
	}
}

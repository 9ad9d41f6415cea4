package daemon_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/entitlements"
)

func TestEntitlementBoolean(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	ctx := context.Background()
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "sso", Name: "SSO"}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso", ExternalCustomerID: "acme-1"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Object != "entitlement_grant" || !strings.HasPrefix(g.ID, "ent_") || g.Feature != "sso" || !strings.HasPrefix(g.CustomerID, "cus_") {
		t.Fatalf("grant %s", g.Raw)
	}
	e, err := c.CheckEntitlement(ctx, g.CustomerID, "sso")
	if err != nil || !e.Entitled || e.Reason != "active" || e.Object != "entitlement" || e.Feature != "sso" || e.CustomerID != g.CustomerID {
		t.Fatalf("check: %v %s", err, e.Raw)
	}
	for _, f := range []string{`"limit"`, `"used"`, `"remaining"`} {
		if strings.Contains(string(e.Raw), f) {
			t.Fatalf("boolean check has %s: %s", f, e.Raw)
		}
	}
	// The grant event is in the feed.
	evs, err := c.ListEvents(ctx, client.ListParams{})
	if err != nil || len(evs.Data) != 1 || evs.Data[0].Type != "entitlement.granted" || !strings.Contains(string(evs.Data[0].Data), g.ID) {
		t.Fatalf("events: %v %s", err, evs.Raw)
	}
	// Revoked by the operator, until a new grant.
	if _, err := entitlements.Revoke(ctx, b.db, g.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, _ := c.CheckEntitlement(ctx, g.CustomerID, "sso"); e.Entitled || e.Reason != "revoked" {
		t.Fatalf("after revoke: %s", e.Raw)
	}
	g2, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso", CustomerID: g.CustomerID, ActiveUntil: ptr(time.Now().Add(1500 * time.Millisecond))})
	if err != nil || g2.CustomerID != g.CustomerID || g2.ActiveUntil == nil {
		t.Fatalf("regrant: %v", err)
	}
	if e, _ := c.CheckEntitlement(ctx, g.CustomerID, "sso"); !e.Entitled || e.Reason != "active" {
		t.Fatalf("after regrant: %s", e.Raw)
	}
	// Past active_until: expired.
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, err := c.CheckEntitlement(ctx, g.CustomerID, "sso")
		if err != nil {
			t.Fatal(err)
		}
		if e.Reason == "expired" && !e.Entitled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never expired: %s", e.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// History kept: both grants are recorded.
	var n int
	if err := b.db.Get(&n, `SELECT count(*) FROM entitlement_grants WHERE customer_id = $1`, g.CustomerID); err != nil || n != 2 {
		t.Fatalf("history %d %v", n, err)
	}

	// Errors.
	_, err = c.CheckEntitlement(ctx, "cus_nope", "sso")
	apiErr(t, err, 404, "unknown_customer")
	_, err = c.CheckEntitlement(ctx, g.CustomerID, "nope")
	apiErr(t, err, 404, "unknown_feature")
	_, err = c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "nope", CustomerID: g.CustomerID})
	apiErr(t, err, 404, "unknown_feature")
	_, err = c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso"})
	apiErr(t, err, 400, "customer_required")
	_, err = c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso", CustomerID: "cus_nope"})
	apiErr(t, err, 400, "unknown_customer")
	_, err = c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso", CustomerID: g.CustomerID, LimitValue: "5"})
	apiErr(t, err, 400, "invalid_request")
	// An active_until already past is granted (201) and checks as expired
	// at once.
	var resp client.Response
	past, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "sso", CustomerID: g.CustomerID, ActiveUntil: ptr(time.Now().Add(-time.Hour))},
		client.CaptureResponse(&resp))
	if err != nil || resp.StatusCode != 201 || past.ActiveUntil == nil {
		t.Fatalf("past active_until: %v %d", err, resp.StatusCode)
	}
	if e, err := c.CheckEntitlement(ctx, g.CustomerID, "sso"); err != nil || e.Entitled || e.Reason != "expired" {
		t.Fatalf("after a past active_until: %v %s", err, e.Raw)
	}
	for body, msg := range map[string]string{
		`{"customer_id":"x"}`: "feature_key:",
		`{"feature_key":"sso","external_customer_id":"a","limit_value":-1}`:   "limit_value:",
		`{"feature_key":"sso","external_customer_id":"a","limit_value":1.5}`:  "limit_value:",
		`{"feature_key":"sso","external_customer_id":"a","active_until":"x"}`: "active_until:",
		`{"feature_key":"sso","external_customer_id":"a","x":1}`:              "x:",
	} {
		status, _, resp := b.raw("POST", "/v1/entitlement_grants", key, body)
		if status != 400 || !strings.Contains(resp, `"message":"`+msg) {
			t.Errorf("%s: %d %s", body, status, resp)
		}
	}
	// Another merchant cannot see this customer.
	other, _ := b.testClient()
	_, err = other.CheckEntitlement(ctx, g.CustomerID, "sso")
	apiErr(t, err, 404, "unknown_customer")
}

func ptr[T any](v T) *T { return &v }

func TestEntitlementMetered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := meterFixture(t, b)
	ctx := context.Background()
	send := func(meter, value string, ts time.Time) {
		t.Helper()
		if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: meter, Value: value, ExternalCustomerID: "m1", Timestamp: &ts}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(feature string) *client.Entitlement {
		t.Helper()
		e, err := c.CheckEntitlement(ctx, custID(t, c, "m1"), feature)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	now := time.Now()
	send("sum", "100", now.Add(-time.Hour)) // before the grant: never counts
	cus := custID(t, c, "m1")
	grantUsage(t, c, "sum", cus, "10")
	e := check("f.sum")
	if !e.Entitled || e.Reason != "active" || *e.Limit != "10" || *e.Used != "0" || *e.Remaining != "10" {
		t.Fatalf("fresh grant: %s", e.Raw)
	}
	send("sum", "4", time.Now())
	send("sum", "50", now.Add(-time.Minute)) // late, older than the grant
	if e = check("f.sum"); !e.Entitled || *e.Used != "4" || *e.Remaining != "6" {
		t.Fatalf("after 4: %s", e.Raw)
	}
	send("sum", "6", time.Now())
	if e = check("f.sum"); e.Entitled || e.Reason != "limit_exceeded" || *e.Used != "10" || *e.Remaining != "0" {
		t.Fatalf("at limit: %s", e.Raw)
	}
	send("sum", "3", time.Now())
	if e = check("f.sum"); *e.Used != "13" || *e.Remaining != "0" {
		t.Fatalf("over limit: %s", e.Raw)
	}
	// A new grant replaces the limit and starts counting afresh.
	if _, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "f.sum", ExternalCustomerID: "m1", LimitValue: "100"}); err != nil {
		t.Fatal(err)
	}
	if e = check("f.sum"); !e.Entitled || *e.Limit != "100" || *e.Used != "0" {
		t.Fatalf("regrant: %s", e.Raw)
	}
	// Without a limit: unlimited, used shown.
	if _, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "f.sum", ExternalCustomerID: "m1"}); err != nil {
		t.Fatal(err)
	}
	send("sum", "7", time.Now())
	if e = check("f.sum"); !e.Entitled || e.Limit != nil || e.Remaining != nil || *e.Used != "7" {
		t.Fatalf("unlimited: %s", e.Raw)
	}

	// count, max, last (last by event timestamp, whatever the arrival order).
	grantUsage(t, c, "calls", cus, "")
	grantUsage(t, c, "peak", cus, "8")
	grantUsage(t, c, "seats", cus, "")
	base := time.Now()
	for _, ev := range []struct {
		v  string
		at time.Duration
	}{{"5", 3 * time.Second}, {"9", 1 * time.Second}, {"3", 2 * time.Second}} {
		send("calls", ev.v, base.Add(ev.at))
		send("peak", ev.v, base.Add(ev.at))
		send("seats", ev.v, base.Add(ev.at))
	}
	if e = check("f.calls"); *e.Used != "3" {
		t.Fatalf("count: %s", e.Raw)
	}
	if e = check("f.peak"); *e.Used != "9" || e.Reason != "limit_exceeded" {
		t.Fatalf("max: %s", e.Raw)
	}
	if e = check("f.seats"); *e.Used != "5" {
		t.Fatalf("last: %s", e.Raw)
	}
	// A metered feature never granted: no_grant, used 0.
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "spare", Name: "spare", Type: "metered", Meter: meterID(t, c, "sum")}); err != nil {
		t.Fatal(err)
	}
	if e = check("spare"); e.Entitled || e.Reason != "no_grant" {
		t.Fatalf("no grant: %s", e.Raw)
	}
}

func custID(t *testing.T, c *client.Client, ext string) string {
	t.Helper()
	e, err := c.SendMeterEvent(context.Background(), client.MeterEventParams{EventName: "calls", ExternalCustomerID: ext, IdempotencyKey: "cust-" + ext})
	if err != nil {
		t.Fatal(err)
	}
	return *e.CustomerID
}

func meterID(t *testing.T, c *client.Client, key string) string {
	t.Helper()
	m, err := c.CreateMeter(context.Background(), client.MeterParams{Key: key, DisplayName: key})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// Property: after random concurrent batches (replays, several customers,
// timestamps on both sides of the grant), every window equals the
// aggregation recomputed from the stored events.
func TestUsageWindowsMatchEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := meterFixture(t, b)
	ctx := context.Background()
	custs := []string{custID(t, c, "p0"), custID(t, c, "p1"), custID(t, c, "p2")}
	meters := []string{"sum", "calls", "peak", "seats"}
	for _, cus := range custs {
		for _, m := range meters {
			grantUsage(t, c, m, cus, "")
		}
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([][]client.MeterEventParams, 12)
	for i := range batches {
		for j := 0; j < 60; j++ {
			ts := start.Add(time.Duration(rng.IntN(240)-120) * time.Second)
			batches[i] = append(batches[i], client.MeterEventParams{
				EventName: meters[rng.IntN(len(meters))], Value: fmt.Sprint(rng.IntN(50)),
				CustomerID: custs[rng.IntN(len(custs))], Timestamp: &ts, IdempotencyKey: fmt.Sprint("p-", rng.IntN(400)),
			})
		}
	}
	var wg sync.WaitGroup
	for _, batch := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.SendMeterEvents(ctx, batch); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, cus := range custs {
		for _, m := range meters {
			var want string
			err := b.db.Get(&want, `SELECT CASE m.aggregation
					WHEN 'sum' THEN coalesce(sum(e.value), 0)::text WHEN 'count' THEN count(e.id)::text
					WHEN 'max' THEN coalesce(max(e.value), 0)::text
					ELSE coalesce((array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC) FILTER (WHERE e.id IS NOT NULL))[1], 0)::text END
				FROM meters m
				JOIN entitlements en ON en.merchant_id = m.merchant_id AND en.customer_id = $1
					AND en.feature_id = (SELECT f.id FROM features f WHERE f.merchant_id = m.merchant_id AND f.key = 'f.' || m.key)
				LEFT JOIN meter_events e ON e.merchant_id = m.merchant_id AND e.meter_id = m.id AND e.customer_id = $1 AND e.event_timestamp >= en.starts_at
				WHERE m.key = $2 GROUP BY m.aggregation`, cus, m)
			if err != nil {
				t.Fatal(err)
			}
			e, err := c.CheckEntitlement(ctx, cus, "f."+m)
			if err != nil {
				t.Fatal(err)
			}
			if *e.Used != want {
				t.Errorf("%s %s: window %s, events %s", cus, m, *e.Used, want)
			}
		}
	}
}

// A grant made while batches are being ingested counts every event at or
// after its start exactly once.
func TestGrantDuringIngestion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := meterFixture(t, b)
	ctx := context.Background()
	cus := custID(t, c, "g")
	if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "f.sum", Name: "s", Type: "metered", Meter: meterID(t, c, "sum")}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				batch := make([]client.MeterEventParams, 50)
				for j := range batch {
					batch[j] = client.MeterEventParams{EventName: "sum", Value: "1", CustomerID: cus}
				}
				if _, err := c.SendMeterEvents(ctx, batch); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		if _, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "f.sum", CustomerID: cus}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	var want string
	if err := b.db.Get(&want, `SELECT count(*)::text FROM meter_events e JOIN entitlements en ON en.merchant_id = e.merchant_id AND en.customer_id = e.customer_id
		WHERE e.customer_id = $1 AND e.event_timestamp >= en.starts_at`, cus); err != nil {
		t.Fatal(err)
	}
	e, err := c.CheckEntitlement(ctx, cus, "f.sum")
	if err != nil || *e.Used != want {
		t.Fatalf("used %s, events %s (%v)", *e.Used, want, err)
	}
}

package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
)

// meters creates a sum, a count and a valued (sum with event_value_key)
// meter and returns the client.
func meterFixture(t *testing.T, b *bundle) (*client.Client, string) {
	t.Helper()
	c, key := b.testClient()
	ctx := context.Background()
	for _, p := range []client.MeterParams{
		{Key: "sum", DisplayName: "Sum"},
		{Key: "calls", DisplayName: "Calls", Aggregation: "count"},
		{Key: "tokens", DisplayName: "Tokens", EventValueKey: "tokens"},
		{Key: "peak", DisplayName: "Peak", Aggregation: "max"},
		{Key: "seats", DisplayName: "Seats", Aggregation: "last"},
	} {
		if _, err := c.CreateMeter(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	return c, key
}

func TestMeterEventSingle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := meterFixture(t, b)
	ctx := context.Background()

	e, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "42", ExternalCustomerID: "u1",
		IdempotencyKey: "k1", Properties: json.RawMessage(`{"region":"eu"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if e.Object != "meter_event" || !strings.HasPrefix(e.ID, "me_") || e.Meter != "sum" || e.Value != "42" || e.Deduplicated ||
		e.CustomerID == nil || !strings.HasPrefix(*e.CustomerID, "cus_") || time.Since(e.EventTimestamp) > time.Minute {
		t.Fatalf("event %s", e.Raw)
	}
	// A replay of the same event returns the original, 200; the key
	// reused for another event is refused.
	var resp client.Response
	again, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "42", ExternalCustomerID: "u1",
		IdempotencyKey: "k1", Properties: json.RawMessage(`{ "region" : "eu" }`)}, client.CaptureResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !again.Deduplicated || again.ID != e.ID || again.Value != "42" || *again.CustomerID != *e.CustomerID {
		t.Fatalf("replay %d %s", resp.StatusCode, again.Raw)
	}
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "7", IdempotencyKey: "k1"})
	if e := apiErr(t, err, 400, "invalid_request"); !strings.HasPrefix(e.Message, "idempotency_key: ") || !strings.Contains(e.Message, "value") {
		t.Fatalf("reused key: %s", e.Message)
	}
	// The same external id is the same customer.
	e2, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", ExternalCustomerID: "u1"}, client.CaptureResponse(&resp))
	if err != nil || resp.StatusCode != 201 || *e2.CustomerID != *e.CustomerID {
		t.Fatalf("second event: %v %d", err, resp.StatusCode)
	}
	// By customer id; with a matching external id too.
	if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", CustomerID: *e.CustomerID, ExternalCustomerID: "u1"}); err != nil {
		t.Fatal(err)
	}
	// Idempotency-Key header.
	h1, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls"}, client.IdempotencyKey("hdr"))
	if err != nil || h1.Value != "1" || h1.IdempotencyKey == nil || *h1.IdempotencyKey != "hdr" || h1.CustomerID != nil {
		t.Fatalf("header key: %v %s", err, h1.Raw)
	}
	h2, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: "hdr"})
	if err != nil || !h2.Deduplicated || h2.ID != h1.ID {
		t.Fatalf("body key replaying header key: %v", err)
	}
	// Quantity from properties[event_value_key].
	p, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "tokens", Properties: json.RawMessage(`{"tokens":"1200","model":"x"}`)})
	if err != nil || p.Value != "1200" {
		t.Fatalf("event_value_key: %v", err)
	}
	ts := time.Now().Add(-34 * 24 * time.Hour).Truncate(time.Second)
	old, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "0", Timestamp: &ts})
	if err != nil || !old.EventTimestamp.Equal(ts) || old.Value != "0" {
		t.Fatalf("old timestamp: %v", err)
	}

	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "nope", Value: "1"})
	apiErr(t, err, 404, "unknown_meter")
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum"})
	apiErr(t, err, 400, "missing_value")
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "tokens", Properties: json.RawMessage(`{"model":"x"}`)})
	apiErr(t, err, 400, "missing_value")
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", CustomerID: "cus_nope"})
	apiErr(t, err, 400, "unknown_customer")
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", CustomerID: *e.CustomerID, ExternalCustomerID: "u2"})
	apiErr(t, err, 400, "invalid_request")
	_, err = c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "1", IdempotencyKey: "a"}, client.IdempotencyKey("b"))
	apiErr(t, err, 400, "invalid_request")

	future := time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	tooOld := time.Now().Add(-36 * 24 * time.Hour).UTC().Format(time.RFC3339)
	bad := map[string]string{
		`{"value":1}`:                                                                         "event_name:",
		`{"event_name":"sum","value":-1}`:                                                     "value:",
		`{"event_name":"sum","value":1.5}`:                                                    "value:",
		`{"event_name":"sum","value":"1e3"}`:                                                  "value:",
		`{"event_name":"sum","value":"+1"}`:                                                   "value:",
		`{"event_name":"sum","value":true}`:                                                   "value:",
		`{"event_name":"sum","value":99999999999999999999}`:                                   "value:",
		`{"event_name":"tokens","properties":{"tokens":-3}}`:                                  "properties.tokens:",
		`{"event_name":"sum","value":1,"timestamp":"` + future + `"}`:                         "timestamp:",
		`{"event_name":"sum","value":1,"timestamp":"` + tooOld + `"}`:                         "timestamp:",
		`{"event_name":"sum","value":1,"timestamp":"yesterday"}`:                              "timestamp:",
		`{"event_name":"sum","value":1,"idempotency_key":"` + strings.Repeat("k", 256) + `"}`: "idempotency_key:",
		`{"event_name":"sum","value":1,"idempotency_key":""}`:                                 "idempotency_key:",
		`{"event_name":"sum","value":1,"properties":[1]}`:                                     "properties:",
		`{"event_name":"sum","value":1,"customer":"x"}`:                                       "customer:",
		`{"event_name":"sum","value":1,"events":[]}`:                                          "",
	}
	for body, field := range bad {
		status, _, resp := b.raw("POST", "/v1/meter-events", key, body)
		if status != 400 || !strings.Contains(resp, `"invalid_request"`) || !strings.Contains(resp, `"message":"`+field) {
			t.Errorf("%s: %d %s", body, status, resp)
		}
	}
	// A 255-character key is fine.
	if _, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "calls", IdempotencyKey: strings.Repeat("é", 255)}); err != nil {
		t.Fatal(err)
	}
	status, _, body := b.raw("POST", "/v1/meter-events", key, `{"event_name":`)
	if status != 400 || !strings.Contains(body, "invalid_json") {
		t.Fatalf("invalid json: %d %s", status, body)
	}
}

func TestMeterEventBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := meterFixture(t, b)
	ctx := context.Background()
	body := `{"events":[
		{"event_name":"sum","value":5,"external_customer_id":"a","idempotency_key":"b1"},
		{"event_name":"nope","value":1},
		{"event_name":"sum"},
		7,
		{"event_name":"calls","external_customer_id":"b","bogus":1},
		{"event_name":"sum","value":9,"external_customer_id":"a","idempotency_key":"b1"},
		{"event_name":"calls","customer_id":"cus_missing"},
		{"event_name":"calls"},
		{"event_name":"sum","value":5,"external_customer_id":"a","idempotency_key":"b1"}
	]}`
	status, _, resp := b.raw("POST", "/v1/meter-events", key, body)
	if status != 200 {
		t.Fatalf("batch: %d %s", status, resp)
	}
	var out struct {
		Object   string            `json:"object"`
		Accepted int               `json:"accepted"`
		Rejected int               `json:"rejected"`
		Data     []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(resp), &out); err != nil {
		t.Fatal(err)
	}
	if out.Object != "list" || out.Accepted != 3 || out.Rejected != 6 || len(out.Data) != 9 {
		t.Fatalf("batch: %s", resp)
	}
	wantErr := map[int]string{1: "unknown_meter", 2: "missing_value", 3: "invalid_request", 4: "invalid_request", 5: "invalid_request", 6: "unknown_customer"}
	for i, raw := range out.Data {
		if code, ok := wantErr[i]; ok {
			want := fmt.Sprintf(`{"object":"error","index":%d,"error":{"code":"%s","message":`, i, code)
			if !strings.HasPrefix(string(raw), want) {
				t.Errorf("item %d: want %s…, got %s", i, want, raw)
			}
			continue
		}
		if !strings.Contains(string(raw), `"object":"meter_event"`) {
			t.Errorf("item %d: %s", i, raw)
		}
	}
	if !strings.Contains(string(out.Data[4]), "bogus") {
		t.Errorf("unknown field not named: %s", out.Data[4])
	}
	// The same event again under b1 within the batch is deduplicated onto
	// the first; b1 with another value is refused.
	var first, dup client.MeterEvent
	_ = json.Unmarshal(out.Data[0], &first)
	_ = json.Unmarshal(out.Data[8], &dup)
	if first.Deduplicated || !dup.Deduplicated || dup.ID != first.ID || dup.Value != "5" {
		t.Fatalf("in-batch repeat: %s / %s", out.Data[0], out.Data[8])
	}
	if !strings.Contains(string(out.Data[5]), `"message":"idempotency_key: `) {
		t.Fatalf("in-batch reuse: %s", out.Data[5])
	}
	// Through the client; a replayed batch counts nothing again.
	events := make([]client.MeterEventParams, 500)
	for i := range events {
		events[i] = client.MeterEventParams{EventName: "sum", Value: "2", ExternalCustomerID: fmt.Sprintf("c%d", i%7), IdempotencyKey: fmt.Sprintf("big-%d", i)}
	}
	res, err := c.SendMeterEvents(ctx, events)
	if err != nil || res.Accepted != 500 || res.Rejected != 0 || len(res.Data) != 500 {
		t.Fatalf("500: %v", err)
	}
	res, err = c.SendMeterEvents(ctx, events)
	if err != nil || res.Accepted != 500 {
		t.Fatalf("replay: %v", err)
	}
	for i, o := range res.Data {
		if o.Event == nil || !o.Event.Deduplicated || *o.Event.IdempotencyKey != fmt.Sprintf("big-%d", i) {
			t.Fatalf("replay item %d: %+v", i, o)
		}
	}
	var n int
	if err := b.db.Get(&n, `SELECT count(*) FROM meter_events WHERE idempotency_key LIKE 'big-%'`); err != nil || n != 500 {
		t.Fatalf("stored %d, %v", n, err)
	}
	for body, msg := range map[string]string{
		`{"events":[]}`:                "events:",
		`{"events":{}}`:                "events:",
		`{"events":[{}],"extra":true}`: "extra:",
		`{"events":[` + strings.TrimSuffix(strings.Repeat(`{"event_name":"calls"},`, 501), ",") + `]}`: "events:",
	} {
		status, _, resp := b.raw("POST", "/v1/meter-events", key, body)
		if status != 400 || !strings.Contains(resp, `"message":"`+msg) {
			t.Errorf("%.40s: %d %s", body, status, resp)
		}
	}
	_, err = c.SendMeterEvents(ctx, events[:1], client.IdempotencyKey("x"))
	apiErr(t, err, 400, "invalid_request")
}

// A batch body may exceed the 1 MiB limit of other requests.
func TestMeterEventBatchBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.MaxBodyBytes = 1 << 20 })
	c, _ := meterFixture(t, b)
	pad := strings.Repeat("x", 3000)
	events := make([]client.MeterEventParams, 500)
	for i := range events {
		events[i] = client.MeterEventParams{EventName: "calls", Properties: json.RawMessage(`{"pad":"` + pad + `"}`)}
	}
	res, err := c.SendMeterEvents(context.Background(), events)
	if err != nil || res.Accepted != 500 {
		t.Fatalf("1.5 MB batch: %v", err)
	}
}

// The same key sent 20 times at once is stored and counted once.
func TestMeterEventIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := meterFixture(t, b)
	ctx := context.Background()
	cust, err := c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "sum", Value: "0", ExternalCustomerID: "conc"})
	if err != nil {
		t.Fatal(err)
	}
	grantUsage(t, c, "sum", *cust.CustomerID, "")
	for round, batch := range []bool{false, true} {
		var wg sync.WaitGroup
		ids := make([]string, 20)
		fresh := make([]bool, 20)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := client.MeterEventParams{EventName: "sum", Value: "3", CustomerID: *cust.CustomerID, IdempotencyKey: fmt.Sprint("same-", round)}
				if batch {
					res, err := c.SendMeterEvents(ctx, []client.MeterEventParams{p, {EventName: "calls"}})
					if err != nil || res.Data[0].Event == nil {
						t.Error(err)
						return
					}
					ids[i], fresh[i] = res.Data[0].Event.ID, !res.Data[0].Event.Deduplicated
					return
				}
				e, err := c.SendMeterEvent(ctx, p)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i], fresh[i] = e.ID, !e.Deduplicated
			}()
		}
		wg.Wait()
		n := 0
		for i := range ids {
			if ids[i] != ids[0] {
				t.Fatalf("different ids: %v", ids)
			}
			if fresh[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d responses not deduplicated", round, n)
		}
	}
	ent, err := c.CheckEntitlement(ctx, *cust.CustomerID, "f.sum")
	if err != nil || *ent.Used != "6" {
		t.Fatalf("used %v, %v", ent, err)
	}
}

// grantUsage makes a metered feature f.<meter> over meter and grants it to
// the customer with limit ("" for none).
func grantUsage(t *testing.T, c *client.Client, meterKey, customerID, limit string) {
	t.Helper()
	ctx := context.Background()
	list, err := c.ListMeters(ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list.Data {
		if m.Key != meterKey {
			continue
		}
		if _, err := c.CreateFeature(ctx, client.FeatureParams{Key: "f." + meterKey, Name: meterKey, Type: "metered", Meter: m.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: "f." + meterKey, CustomerID: customerID, LimitValue: limit}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no meter %s", meterKey)
}

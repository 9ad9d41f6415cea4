package daemon_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestMeters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	ctx := context.Background()
	m, err := c.CreateMeter(ctx, client.MeterParams{Key: "api.calls-v1_x", DisplayName: "API calls", UnitLabel: "calls", EventValueKey: "n", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Object != "meter" || !strings.HasPrefix(m.ID, "meter_") || m.Aggregation != "sum" || m.UnitLabel != "calls" || m.Key != "api.calls-v1_x" {
		t.Fatalf("meter %s", m.Raw)
	}
	// Idempotent by key: a repeat (even with other fields) returns the original.
	again, err := c.CreateMeter(ctx, client.MeterParams{Key: "api.calls-v1_x", DisplayName: "Other", Aggregation: "max"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != m.ID || again.DisplayName != "API calls" {
		t.Fatalf("repeat made a new meter: %s", again.Raw)
	}
	for _, agg := range []string{"count", "max", "last"} {
		got, err := c.CreateMeter(ctx, client.MeterParams{Key: "m_" + agg, DisplayName: agg, Aggregation: agg})
		if err != nil || got.Aggregation != agg {
			t.Fatalf("%s: %v", agg, err)
		}
	}
	list, err := c.ListMeters(ctx, client.ListParams{Limit: 100})
	if err != nil || len(list.Data) != 4 || list.Data[3].ID != m.ID {
		t.Fatalf("list: %v %s", err, list.Raw)
	}
	bad := map[string]string{
		`{"display_name":"x"}`:                                          "key:",
		`{"key":"has space","display_name":"x"}`:                        "key:",
		`{"key":"ünïcode","display_name":"x"}`:                          "key:",
		`{"key":"` + strings.Repeat("k", 101) + `","display_name":"x"}`: "key:",
		`{"key":"k"}`:                   "display_name:",
		`{"key":"k","display_name":""}`: "display_name:",
		`{"key":"k","display_name":"x","aggregation":"avg"}`: "aggregation:",
		`{"key":"k","display_name":"x","aggregation":5}`:     "aggregation:",
		`{"key":"k","display_name":"x","extra":1}`:           "extra:",
	}
	for body, field := range bad {
		status, _, resp := b.raw("POST", "/v1/meters", key, body)
		if status != 400 || !strings.Contains(resp, `"invalid_request"`) || !strings.Contains(resp, `"message":"`+field) {
			t.Fatalf("%s: %d %s", body, status, resp)
		}
	}
}

// Concurrent creates of one key end with exactly one meter.
func TestMeterCreateConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.CreateMeter(context.Background(), client.MeterParams{Key: "same", DisplayName: "x"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = m.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("different meters: %v", ids)
		}
	}
}

package daemon_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestFeatures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key := b.testClient()
	ctx := context.Background()
	m, err := c.CreateMeter(ctx, client.MeterParams{Key: "tokens", DisplayName: "Tokens"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.CreateFeature(ctx, client.FeatureParams{Key: "sso", Name: "Single sign-on"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Object != "feature" || !strings.HasPrefix(f.ID, "feat_") || f.Type != "boolean" || f.MeterID != nil || f.Key != "sso" {
		t.Fatalf("feature %s", f.Raw)
	}
	if !strings.Contains(string(f.Raw), `"meter_id":null`) {
		t.Fatalf("meter_id must be present: %s", f.Raw)
	}
	mf, err := c.CreateFeature(ctx, client.FeatureParams{Key: "ai.tokens", Name: "AI tokens", Type: "metered", Meter: m.ID, UnitLabel: "token"})
	if err != nil {
		t.Fatal(err)
	}
	if mf.Type != "metered" || mf.MeterID == nil || *mf.MeterID != m.ID {
		t.Fatalf("metered feature %s", mf.Raw)
	}
	// Idempotent by key: a repeat, even with other fields, returns the original.
	again, err := c.CreateFeature(ctx, client.FeatureParams{Key: "ai.tokens", Name: "Other", Type: "metered", Meter: m.ID})
	if err != nil || again.ID != mf.ID || again.Name != "AI tokens" {
		t.Fatalf("repeat: %v %s", err, again.Raw)
	}
	bad := map[string]string{
		`{"name":"x"}`:                                                 "key:",
		`{"key":"has space","name":"x"}`:                               "key:",
		`{"key":"k"}`:                                                  "name:",
		`{"key":"k","name":"x","type":"tiered"}`:                       "type:",
		`{"key":"k","name":"x","type":"metered"}`:                      "meter:",
		`{"key":"k","name":"x","meter":"` + m.ID + `"}`:                "meter:",
		`{"key":"k","name":"x","type":"metered","meter":5}`:            "meter:",
		`{"key":"k","name":"x","type":"metered","meter":"meter_nope"}`: "meter:",
		`{"key":"k","name":"x","extra":1}`:                             "extra:",
	}
	for body, field := range bad {
		status, _, resp := b.raw("POST", "/v1/features", key, body)
		if status != 400 || !strings.Contains(resp, `"invalid_request"`) || !strings.Contains(resp, `"message":"`+field) {
			t.Fatalf("%s: %d %s", body, status, resp)
		}
	}
	// Another merchant's meter is not this merchant's.
	other, _ := b.testClient()
	_, err = other.CreateFeature(ctx, client.FeatureParams{Key: "t", Name: "t", Type: "metered", Meter: m.ID})
	apiErr(t, err, 400, "invalid_request")
	// No list endpoint.
	status, _, resp := b.raw("GET", "/v1/features", key, "")
	if status != 404 || !strings.Contains(resp, "resource_not_found") {
		t.Fatalf("GET /v1/features: %d %s", status, resp)
	}
}

func TestFeatureCreateConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	var wg sync.WaitGroup
	ids := make([]string, 12)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := c.CreateFeature(context.Background(), client.FeatureParams{Key: "same", Name: "x"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = f.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("different features: %v", ids)
		}
	}
}

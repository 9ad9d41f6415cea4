package client_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// A POST whose connection was lost after sending may have been processed:
// only a customer's checkout payment, which carries no key, is not sent
// again; an API POST is, with the same Idempotency-Key.
func TestConnectionErrorAfterSendRetriedOnlyWithKey(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := setup(t, hangUp(&hits), client.WithMaxRetries(2))
	if _, err := c.Pay(context.Background(), "inv_1", client.CheckoutParams{Payer: "0x42"}); err == nil {
		t.Fatal("want an error")
	}
	if hits.Load() != 1 {
		t.Errorf("hits = %d: a payment that may have been processed must not be sent again", hits.Load())
	}
	hits.Store(0)
	if _, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "1", Description: "x"}); err == nil {
		t.Fatal("want an error")
	}
	if hits.Load() != 3 {
		t.Errorf("hits = %d, want 3: a keyed POST is safe to send again", hits.Load())
	}
}

// Every API POST carries an Idempotency-Key: the caller's, or one made for
// the call and kept across its retries; a new call gets a new one, and a
// body that carries its own key is not given a second.
func TestIdempotencyKeyOnEveryCreate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	var hits atomic.Int32
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if hits.Add(1)%3 != 0 { // two 503s, then the answer
			reply(w, 503, `{"error":{"code":"service_unavailable","message":"database unavailable"}}`)
			return
		}
		switch {
		case strings.Contains(r.URL.Path, "credit_grants"):
			reply(w, 200, `{"object":"credit_grant","customer_id":"c","granted":"1","balance":"1","entry_id":"cle_1","deduplicated":false}`)
		case strings.Contains(r.URL.Path, "plans"):
			reply(w, 201, `{"object":"plan","id":"price_1"}`)
		default:
			reply(w, 201, invoiceJSON)
		}
	}, client.WithRetryWait(time.Millisecond))
	ctx := context.Background()
	calls := []func() error{
		func() error {
			_, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"})
			return err
		},
		func() error {
			_, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"})
			return err
		},
		func() error {
			_, err := c.CreatePlan(ctx, client.PlanParams{Name: "Pro", Amount: "1", Interval: "month"})
			return err
		},
		func() error {
			_, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"}, client.IdempotencyKey("mine"))
			return err
		},
		func() error {
			_, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1", CustomerID: "c", IdempotencyKey: "in-body"})
			return err
		},
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if len(keys) != 3*len(calls) {
		t.Fatalf("%d requests: %q", len(keys), keys)
	}
	for i := 0; i < len(keys); i += 3 {
		if keys[i] != keys[i+1] || keys[i] != keys[i+2] {
			t.Errorf("call %d changed its key across retries: %q", i/3, keys[i:i+3])
		}
	}
	if !strings.HasPrefix(keys[0], "auto_") || keys[0] == keys[3] || !strings.HasPrefix(keys[6], "auto_") {
		t.Errorf("made keys: %q", keys)
	}
	if keys[9] != "mine" || keys[12] != "" {
		t.Errorf("the caller's key %q; a body-keyed request's header %q, want none", keys[9], keys[12])
	}
}

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

func TestGrantCredits(t *testing.T) {
	t.Parallel()
	var path, key string
	var body map[string]any
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		path, key = r.Method+" "+r.URL.Path, r.Header.Get("Idempotency-Key")
		json.NewDecoder(r.Body).Decode(&body)
		reply(w, 201, `{"object":"credit_grant","customer_id":"cus_1","granted":"5","balance":"5","entry_id":"cle_1","deduplicated":false}`)
	})
	exp := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	g, err := c.GrantCredits(context.Background(), client.CreditGrantParams{Amount: "5", ExternalCustomerID: "u1", ExpiresAt: &exp},
		client.IdempotencyKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if path != "POST /v1/credit_grants" || key != "k1" || g.EntryID != "cle_1" || g.Balance != "5" || len(g.Raw) == 0 {
		t.Fatalf("%s %s %+v", path, key, g)
	}
	// Empty optional fields are not sent.
	if len(body) != 3 || body["amount"] != "5" || body["external_customer_id"] != "u1" || body["expires_at"] != "2031-01-01T00:00:00Z" {
		t.Fatalf("body %v", body)
	}
}

func TestDebitCredits(t *testing.T) {
	t.Parallel()
	var body map[string]any
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		reply(w, 200, `{"object":"credit_debit","customer_id":"cus_1","requested":"9","covered":"4","shortfall":"5","balance":"0","deduplicated":true}`)
	})
	d, err := c.DebitCredits(context.Background(), client.CreditDebitParams{Amount: "9", CustomerID: "cus_1", AllowNegative: true, IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Covered != "4" || d.Shortfall != "5" || !d.Deduplicated {
		t.Fatalf("%+v", d)
	}
	if body["allow_negative"] != true || body["idempotency_key"] != "k" || body["customer_id"] != "cus_1" {
		t.Fatalf("body %v", body)
	}
}

// A debit is safe to retry after a 503: with the idempotency key in its
// body, or without one with a key the client makes for the call.
func TestDebitRetriesWithKey(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		reply(w, 503, `{"error":{"code":"service_unavailable","message":"down"}}`)
	}, client.WithMaxRetries(2))
	_, err := c.DebitCredits(context.Background(), client.CreditDebitParams{Amount: "1", CustomerID: "c"})
	if err == nil || hits.Load() != 3 {
		t.Fatalf("without key: %v after %d", err, hits.Load())
	}
	hits.Store(0)
	_, err = c.DebitCredits(context.Background(), client.CreditDebitParams{Amount: "1", CustomerID: "c", IdempotencyKey: "k"})
	if err == nil || hits.Load() != 3 {
		t.Fatalf("with key: %v after %d", err, hits.Load())
	}
}

func TestGetCreditBalance(t *testing.T) {
	t.Parallel()
	var path string
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.EscapedPath()
		if r.URL.Path == "/v1/customers/cus_none/credit_balance" {
			reply(w, 404, `{"error":{"code":"unknown_customer","message":"no customer cus_none"}}`)
			return
		}
		reply(w, 200, `{"object":"credit_balance","customer_id":"a/b","balance":"0","currency":"usdc"}`)
	})
	b, err := c.GetCreditBalance(context.Background(), "a/b")
	if err != nil || path != "/v1/customers/a%2Fb/credit_balance" || b.Balance != "0" || b.AccountID != "" {
		t.Fatalf("%v %s %+v", err, path, b)
	}
	_, err = c.GetCreditBalance(context.Background(), "cus_none")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != client.CodeUnknownCustomer {
		t.Fatalf("%v", err)
	}
}

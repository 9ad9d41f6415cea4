package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// setup starts a server running h and returns a client for it whose retries
// wait at most a millisecond.
func setup(t *testing.T, h http.HandlerFunc, opts ...client.Option) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts = append([]client.Option{client.WithRetryWait(time.Millisecond)}, opts...)
	return client.New(srv.URL+"/", "sk_test_abc", opts...)
}

// reply writes a wire-format response.
func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("wc-version", "2026-07-01")
	w.Header().Set("request-id", "req_123")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

const invoiceJSON = `{"object":"invoice","id":"inv_1","amount":"9000000","status":"open",` +
	`"checkout_url":"http://x/checkout/inv_1","description":"Consulting","memo":null,` +
	`"invoice_number":null,"recipient":null,"due_at":null,` +
	`"created_at":"2026-11-22T03:49:26.123456Z","livemode":false}`

func TestCreateInvoice(t *testing.T) {
	t.Parallel()
	var got struct {
		method, path, auth, ua, ctype string
		body                          map[string]any
	}
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path = r.Method, r.URL.Path
		got.auth, got.ua, got.ctype = r.Header.Get("Authorization"), r.Header.Get("User-Agent"), r.Header.Get("Content-Type")
		json.NewDecoder(r.Body).Decode(&got.body)
		reply(w, 201, invoiceJSON)
	})
	due := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "9000000", Description: "Consulting", DueAt: &due})
	if err != nil {
		t.Fatal(err)
	}
	if got.method != "POST" || got.path != "/v1/invoices" || got.auth != "Bearer sk_test_abc" || got.ctype != "application/json" {
		t.Errorf("request = %+v", got)
	}
	if !strings.HasPrefix(got.ua, "tollgate-go/") {
		t.Errorf("User-Agent = %q, want tollgate-go/<version>", got.ua)
	}
	want := map[string]any{"amount": "9000000", "description": "Consulting", "due_at": "2026-12-01T00:00:00Z"}
	if len(got.body) != len(want) {
		t.Errorf("body = %v, want only %v (empty optional fields omitted)", got.body, want)
	}
	for k, v := range want {
		if got.body[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, got.body[k], v)
		}
	}
	if inv.ID != "inv_1" || inv.Amount != "9000000" || inv.CheckoutURL != "http://x/checkout/inv_1" || inv.Memo != nil {
		t.Errorf("invoice = %+v", inv)
	}
	if string(inv.Raw) != invoiceJSON {
		t.Errorf("Raw = %s, want the exact body", inv.Raw)
	}
}

func TestUserAgentOption(t *testing.T) {
	t.Parallel()
	var ua string
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		ua = r.Header.Get("User-Agent")
		reply(w, 200, `{"object":"list","data":[],"has_more":false,"next_cursor":null}`)
	}, client.WithUserAgent("tollgate-cli/1.2.3"))
	if _, err := c.ListMeters(context.Background(), client.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if ua != "tollgate-cli/1.2.3" {
		t.Errorf("User-Agent = %q", ua)
	}
}

func TestErrorDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		retryAfter  string
		want        client.Error
		wantString  string
	}{
		{
			name: "api error", status: 400, contentType: "application/json",
			body:       `{"error":{"code":"invalid_request","message":"description: must be 1 to 500 characters"}}`,
			want:       client.Error{Status: 400, Code: "invalid_request", Message: "description: must be 1 to 500 characters", RequestID: "req_123"},
			wantString: "invalid_request: description: must be 1 to 500 characters (HTTP 400, request-id req_123)",
		},
		{
			name: "unauthorized", status: 401, contentType: "application/json",
			body: `{"error":{"code":"unauthorized","message":"invalid API key"}}`,
			want: client.Error{Status: 401, Code: "unauthorized", Message: "invalid API key", RequestID: "req_123"},
		},
		{
			name: "html from a proxy", status: 502, contentType: "text/html",
			body:       "<html><body>Bad Gateway</body></html>",
			want:       client.Error{Status: 502, Message: "bad gateway", RequestID: "req_123"},
			wantString: "bad gateway (HTTP 502, request-id req_123)",
		},
		{
			name: "plain text", status: 500, contentType: "text/plain",
			body: "upstream exploded\nstack...",
			want: client.Error{Status: 500, Message: "internal server error: upstream exploded", RequestID: "req_123"},
		},
		{
			name: "empty body with retry-after", status: 503, retryAfter: "7",
			want: client.Error{Status: 503, Message: "service unavailable", RequestID: "req_123", RetryAfter: 7 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("request-id", "req_123")
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}, client.WithMaxRetries(0))
			_, err := c.ListInvoices(context.Background(), client.ListParams{})
			var apiErr *client.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *client.Error", err, err)
			}
			if *apiErr != tt.want {
				t.Errorf("error = %+v, want %+v", *apiErr, tt.want)
			}
			if tt.wantString != "" && apiErr.Error() != tt.wantString {
				t.Errorf("Error() = %q, want %q", apiErr.Error(), tt.wantString)
			}
		})
	}
}

func TestRetryOn429HonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	// retry-after is 1 s; WithRetryWait caps it so the test stays fast,
	// while a POST without an idempotency key is still retried: a 429 means
	// the request was refused before any work was done.
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("retry-after", "1")
			reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down"}}`)
			return
		}
		reply(w, 201, invoiceJSON)
	}, client.WithRetryWait(20*time.Millisecond))
	start := time.Now()
	if _, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "1", Description: "x"}); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 2 {
		t.Errorf("hits = %d, want 2", hits.Load())
	}
	if d := time.Since(start); d < 20*time.Millisecond || d > 900*time.Millisecond {
		t.Errorf("waited %v, want the capped retry-after (20ms)", d)
	}
}

func TestRetriesExhausted(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("retry-after", "2")
		reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down"}}`)
	}, client.WithMaxRetries(2))
	_, err := c.ListEvents(context.Background(), client.ListParams{})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code != client.CodeRateLimited || apiErr.RetryAfter != 2*time.Second {
		t.Fatalf("err = %#v, want rate_limited with RetryAfter 2s", err)
	}
	if hits.Load() != 3 {
		t.Errorf("hits = %d, want 1 + 2 retries", hits.Load())
	}
}

func TestRetryOn503OnlyWhenIdempotent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		call     func(*client.Client) error
		wantHits int32
	}{
		{"GET is retried", func(c *client.Client) error {
			_, err := c.ListPayments(context.Background(), client.ListParams{})
			return err
		}, 2},
		{"POST without a key of its own gets one and is", func(c *client.Client) error {
			_, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "1", Description: "x"})
			return err
		}, 2},
		{"checkout pay is not: the customer decides", func(c *client.Client) error {
			_, err := c.Pay(context.Background(), "inv_1", client.CheckoutParams{Payer: "0x42"})
			return err
		}, 1},
		{"POST with an idempotency key is", func(c *client.Client) error {
			_, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "1", Description: "x"}, client.IdempotencyKey("k1"))
			return err
		}, 2},
		{"meter create is idempotent by key", func(c *client.Client) error {
			_, err := c.CreateMeter(context.Background(), client.MeterParams{Key: "api_calls", DisplayName: "API calls"})
			return err
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			c := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if hits.Add(1) == 1 {
					reply(w, 503, `{"error":{"code":"service_unavailable","message":"database unavailable"}}`)
					return
				}
				if r.Method == "POST" && strings.Contains(r.URL.Path, "invoices") && r.Header.Get("Idempotency-Key") == "" {
					t.Errorf("retried POST without an Idempotency-Key")
				}
				switch r.URL.Path {
				case "/v1/payments":
					reply(w, 200, `{"object":"list","data":[],"has_more":false,"next_cursor":null}`)
				case "/v1/meters":
					reply(w, 200, `{"object":"meter","id":"meter_1","key":"api_calls"}`)
				default:
					reply(w, 201, invoiceJSON)
				}
			})
			err := tt.call(c)
			if hits.Load() != tt.wantHits {
				t.Errorf("hits = %d, want %d (err %v)", hits.Load(), tt.wantHits, err)
			}
			if tt.wantHits == 1 && err == nil {
				t.Error("want the 503 error")
			}
		})
	}
}

// hangUp is a handler that reads the request and closes the connection
// without answering: the request may have been processed.
func hangUp(hits *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func TestConnectionErrorRetriedForGET(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := setup(t, hangUp(&hits), client.WithMaxRetries(2))
	if _, err := c.ListSubscriptions(context.Background(), client.ListParams{}); err == nil {
		t.Fatal("want an error")
	}
	if hits.Load() != 3 {
		t.Errorf("hits = %d, want 3", hits.Load())
	}
}

// dialFail is a transport whose every connection attempt fails.
type dialFail struct{ calls atomic.Int32 }

func (d *dialFail) RoundTrip(*http.Request) (*http.Response, error) {
	d.calls.Add(1)
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
}

func TestDialErrorRetriedEvenForPOST(t *testing.T) {
	t.Parallel()
	// A request that never reached the server cannot have done anything.
	rt := &dialFail{}
	c := client.New("http://127.0.0.1:1", "sk_test_abc", client.WithHTTPClient(&http.Client{Transport: rt}),
		client.WithRetryWait(time.Millisecond), client.WithMaxRetries(2))
	if _, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "1", Description: "x"}); err == nil {
		t.Fatal("want an error")
	}
	if rt.calls.Load() != 3 {
		t.Errorf("attempts = %d, want 3", rt.calls.Load())
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after", "30")
		reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down"}}`)
	}, client.WithRetryWait(time.Minute))
	start := time.Now()
	_, err := c.ListMeters(ctx, client.ListParams{})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v, want a prompt context.Canceled", err, time.Since(start))
	}
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Errorf("err = %v, want it to keep the last API error", err)
	}
}

func TestCaptureResponse(t *testing.T) {
	t.Parallel()
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"object":"meter","id":"meter_1","key":"api_calls","display_name":"API calls","aggregation":"sum"}`)
	})
	var resp client.Response
	m, err := c.CreateMeter(context.Background(), client.MeterParams{Key: "api_calls", DisplayName: "x"}, client.CaptureResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.RequestID != "req_123" || resp.Header.Get("wc-version") != "2026-07-01" {
		t.Errorf("response = %+v", resp)
	}
	if m.ID != "meter_1" || m.Aggregation != "sum" {
		t.Errorf("meter = %+v", m)
	}
}

func TestMalformedSuccessBody(t *testing.T) {
	t.Parallel()
	c := setup(t, func(w http.ResponseWriter, r *http.Request) { reply(w, 201, `{"object":`) })
	_, err := c.CreateMeter(context.Background(), client.MeterParams{Key: "k", DisplayName: "x"})
	if err == nil || !strings.Contains(err.Error(), "decoding") {
		t.Errorf("err = %v, want a decoding error", err)
	}
}

func TestRetryNotify(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	h := func(w http.ResponseWriter, r *http.Request) {
		switch hits.Add(1) {
		case 1:
			w.Header().Set("retry-after", "13")
			reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down"}}`)
		case 2:
			reply(w, 503, `{"error":{"code":"service_unavailable","message":"database unavailable"}}`)
		default:
			reply(w, 200, `{"object":"list","data":[],"has_more":false,"next_cursor":null}`)
		}
	}
	var got []client.Retry
	c := setup(t, h, client.WithRetryWait(5*time.Millisecond), client.WithRetryNotify(func(r client.Retry) { got = append(got, r) }))
	if _, err := c.ListEvents(context.Background(), client.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("notified %d times, want 2: %+v", len(got), got)
	}
	var apiErr *client.Error
	if r := got[0]; r.Method != "GET" || r.Path != "/v1/events" || r.Attempt != 1 || r.Wait != 5*time.Millisecond || !r.RateLimited() ||
		!errors.As(r.Err, &apiErr) || apiErr.RetryAfter != 13*time.Second {
		t.Errorf("first retry: %+v", r)
	}
	if r := got[1]; r.Attempt != 2 || r.RateLimited() || !errors.As(r.Err, &apiErr) || apiErr.Status != 503 {
		t.Errorf("second retry: %+v", r)
	}
	// A request that is not retried notifies nobody.
	got = nil
	hits.Store(1) // the next answer is the 503
	if _, err := c.Pay(context.Background(), "inv_1", client.CheckoutParams{Payer: "0x42"}); err == nil || len(got) != 0 {
		t.Errorf("checkout pay after 503: err %v, notified %+v", err, got)
	}
}

package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
)

// Client calls one tollgate API with one key. It is safe for concurrent use.
type Client struct {
	baseURL    string
	apiKey     string
	httpClient *http.Client
	userAgent  string
	maxRetries int
	maxWait    time.Duration
	notify     func(Retry)
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send requests through hc (timeouts,
// proxies, custom transports). The default is a client with a 60 s timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithUserAgent sets the User-Agent header (default "tollgate-go/<version>").
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithMaxRetries sets how many times a failed request is retried (default 3;
// 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(c *Client) { c.maxRetries = max(n, 0) }
}

// WithRetryWait caps the wait before any retry, including one the server
// asked for with retry-after (default 60 s, the rate limit's window). Tests
// use a small value to keep retries fast.
func WithRetryWait(maxWait time.Duration) Option {
	return func(c *Client) { c.maxWait = max(maxWait, 0) }
}

// Retry describes a retry the client is about to make, for WithRetryNotify.
type Retry struct {
	Method  string        // the request's method, e.g. "POST"
	Path    string        // the request's path, e.g. "/v1/meter-events"
	Attempt int           // 1 for the first retry of the request
	Wait    time.Duration // how long the client waits before sending again
	// Err is what the last attempt got: an *Error (429 rate_limited, 503)
	// or a connection error.
	Err error
}

// RateLimited reports whether the retry follows a 429 rate_limited answer.
func (r Retry) RateLimited() bool {
	var apiErr *Error
	return errors.As(r.Err, &apiErr) && apiErr.Status == http.StatusTooManyRequests
}

// WithRetryNotify makes the client call fn before it waits to retry a
// request, e.g. to tell a person why nothing seems to happen. fn runs on the
// calling goroutine, so it must be quick and, when the client is shared,
// safe for concurrent use. By default retries are silent.
func WithRetryNotify(fn func(Retry)) Option { return func(c *Client) { c.notify = fn } }

// New returns a client for the API at baseURL (e.g. "http://127.0.0.1:8080")
// authenticating with apiKey (sk_test_… or sk_live_…).
func New(baseURL, apiKey string, opts ...Option) *Client {
	c := &Client{
		baseURL:    strings.TrimRight(baseURL, "/"),
		apiKey:     apiKey,
		httpClient: &http.Client{Timeout: 60 * time.Second},
		userAgent:  "tollgate-go/" + moduleVersion(),
		maxRetries: 3,
		maxWait:    60 * time.Second,
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// CallOption configures a single call.
type CallOption func(*callOptions)

type callOptions struct {
	idempotencyKey string
	response       *Response
}

// IdempotencyKey sends key as the Idempotency-Key header instead of one
// made for the call. Every create or change of the API takes one: a replay
// with the same key does the work once, so such a call is also retried
// after 503s and connection errors. Use a key of your own to retry across
// calls or processes, such as a job's id.
func IdempotencyKey(key string) CallOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

// Response describes the HTTP response to a call.
type Response struct {
	StatusCode int
	RequestID  string
	Header     http.Header
}

// CaptureResponse stores the final HTTP response's status and headers in r,
// e.g. to tell a created meter (201) from an existing one (200).
func CaptureResponse(r *Response) CallOption {
	return func(o *callOptions) { o.response = r }
}

// request is one API call, replayable across retries.
type request struct {
	method string
	path   string
	query  url.Values
	body   []byte
	// idempotent means repeating the request cannot do the work twice.
	idempotent bool
	opts       callOptions
}

func newRequest(method, path string, body any, idempotent bool, opts []CallOption) (*request, error) {
	r := &request{method: method, path: path, idempotent: idempotent || method == http.MethodGet}
	for _, opt := range opts {
		opt(&r.opts)
	}
	if r.opts.idempotencyKey != "" {
		r.idempotent = true
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: encoding request: %w", err)
		}
		r.body = b
	}
	return r, nil
}

// bodyKeyed is a request body that can carry its own idempotency key
// (credit grants and debits, meter events).
type bodyKeyed interface{ bodyIdempotencyKey() string }

// autoKey gives a POST without a key of its own a new Idempotency-Key, made
// once for this call: every retry of it sends the same key, so a retry
// after a 503 or a lost connection, when the first attempt may have been
// committed, answers the first result instead of doing the work again.
// That makes the request safe to repeat. A body that carries its own key
// keeps it alone: two different keys for one request would disagree.
func (r *request) autoKey(body any) {
	if r.method != http.MethodPost || r.opts.idempotencyKey != "" {
		return
	}
	if k, ok := body.(bodyKeyed); ok && k.bodyIdempotencyKey() != "" {
		return
	}
	b := make([]byte, 16)
	_, _ = crand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	r.opts.idempotencyKey = "auto_" + hex.EncodeToString(b)
	r.idempotent = true
}

// maxBody bounds how much of a response is read, so a misbehaving server
// cannot exhaust memory.
const maxBody = 32 << 20

// do sends r, retrying as the package doc describes, and returns the body of
// a 2xx response. Any other status is an *Error.
func (c *Client) do(ctx context.Context, r *request) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		status, header, body, err := c.send(ctx, r)
		if err == nil && r.opts.response != nil {
			*r.opts.response = Response{StatusCode: status, RequestID: requestID(header), Header: header}
		}
		if err == nil && status >= 200 && status < 300 {
			return body, nil
		}
		if err == nil {
			err = decodeError(status, header, body)
		}
		wait, retry := c.retryable(r, err, attempt)
		if !retry {
			return nil, err
		}
		if c.notify != nil {
			c.notify(Retry{Method: r.method, Path: r.path, Attempt: attempt + 1, Wait: wait, Err: err})
		}
		if werr := sleep(ctx, wait); werr != nil {
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, werr)
		}
	}
}

// send makes one attempt; status is 0 when no response arrived.
func (c *Client) send(ctx context.Context, r *request) (int, http.Header, []byte, error) {
	u := c.baseURL + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.opts.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.opts.idempotencyKey)
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		// The server answered, so the request was processed: reading the
		// body failed, not sending. Report it as a connection error that
		// only idempotent requests retry.
		return 0, nil, nil, fmt.Errorf("client: reading response: %w", err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// retryable decides whether attempt may be followed by another and how long
// to wait first.
func (c *Client) retryable(r *request, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var apiErr *Error
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case http.StatusTooManyRequests:
			// A rate-limited request was refused before any work was
			// done, so every request may be repeated.
			return c.wait(apiErr.RetryAfter, attempt), true
		case http.StatusServiceUnavailable:
			// The server may have committed the work before failing.
			return c.wait(apiErr.RetryAfter, attempt), r.idempotent
		}
		return 0, false
	}
	// A connection error: only a request that never left, or one that is
	// safe to repeat, is sent again.
	return c.wait(0, attempt), r.idempotent || notSent(err)
}

// notSent reports whether err shows the request never left this machine
// (no connection or no address), so repeating it cannot do work twice.
func notSent(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr)
}

// wait is the server's retry-after when given, else exponential backoff with
// jitter from 250 ms; both are capped by WithRetryWait.
func (c *Client) wait(retryAfter time.Duration, attempt int) time.Duration {
	d := retryAfter
	if d <= 0 {
		d = 250 * time.Millisecond << min(attempt, 8)
		d += rand.N(d/2 + 1)
	}
	return min(d, c.maxWait)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// moduleVersion is the tollgate module's version as recorded in the binary's
// build info, whether tollgate is the main module or a merchant's dependency.
func moduleVersion() string {
	const module = "github.com/tollgatehq/tollgate"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if info.Main.Path == module && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == module {
			return dep.Version
		}
	}
	return "devel"
}

package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// Delivery request headers besides x-wc-signature: the event's type, which
// receivers may route on, and the ids and attempt number that help them
// deduplicate and debug.
const (
	headerEventType       = "wc-event-type"
	headerEventID         = "wc-event-id"
	headerDeliveryID      = "wc-delivery-id"
	headerDeliveryAttempt = "wc-delivery-attempt"
)

// deliveryBody is the JSON a delivery carries: the event exactly as
// GET /v1/events shows it.
func deliveryBody(job webhooks.Job) ([]byte, error) {
	return json.Marshal(job.Event.Wire())
}

// send makes one attempt of job and reports what happened; it never fails,
// since every outcome is recorded.
func (d *deliverer) send(ctx context.Context, job webhooks.Job) webhooks.Result {
	start := time.Now()
	res := webhooks.Result{StartedAt: start}
	fail := func(msg string) webhooks.Result {
		res.Err, res.Latency = msg, time.Since(start)
		return res
	}
	u, err := url.Parse(job.URL)
	if err != nil {
		return fail("invalid endpoint URL: " + err.Error())
	}
	if u.Scheme != "https" && !d.insecure {
		return fail("refused: " + u.Scheme + ":// endpoint; deliveries need https (serve with --allow-insecure-webhooks for local development)")
	}
	body, err := deliveryBody(job)
	if err != nil {
		return fail("encoding the event: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.URL, bytes.NewReader(body))
	if err != nil {
		return fail(err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.userAgent)
	// Signed afresh for every attempt: a fresh t keeps retries inside the
	// receivers' replay window.
	req.Header.Set(webhook.HeaderName, webhook.Sign(body, time.Now(), job.Secrets...))
	req.Header.Set(headerEventType, job.Event.Type)
	req.Header.Set(headerEventID, job.Event.ID)
	req.Header.Set(headerDeliveryID, job.ID)
	req.Header.Set(headerDeliveryAttempt, strconv.Itoa(job.Attempt))
	resp, err := d.client.Do(req)
	if err != nil {
		return fail(err.Error())
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	if res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable {
		if wait, ok := webhooks.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			res.RetryAfter = &wait
		}
	}
	res.Body, err = io.ReadAll(io.LimitReader(resp.Body, webhooks.MaxResponseBody))
	res.Latency = time.Since(start)
	if err != nil {
		res.Err = "reading the response: " + err.Error()
		return res
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBody))
	return res
}

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// maxForwardAnswer bounds how much of a handler's answer Forward keeps.
const maxForwardAnswer = 64 << 10

// Forward POSTs one event, as the API returned it (raw), to url signed with
// secret exactly as the daemon signs a delivery: the body is raw without
// insignificant whitespace, x-wc-signature is Sign(body, now, secret), and
// wc-event-type and wc-event-id carry eventType and eventID. It is what
// `tollgate events tail --forward-to` and the TUI's replay use to feed events
// to a webhook handler under development.
//
// It returns the handler's status and the start of its answer (at most
// 64 KiB). err is non-nil only when no answer arrived: a bad URL, a
// connection error, or ctx ending; any status, 2xx or not, is an answer.
func Forward(ctx context.Context, hc *http.Client, url, secret, userAgent, eventType, eventID string, raw []byte) (status int, body []byte, err error) {
	payload := Compact(raw)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	req.Header.Set(HeaderName, Sign(payload, time.Now(), secret))
	req.Header.Set("wc-event-type", eventType)
	req.Header.Set("wc-event-id", eventID)
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxForwardAnswer))
	// Drain (a bounded amount) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, nil
}

// Compact returns raw without insignificant whitespace: the exact bytes the
// daemon signs for a delivery of an event the API returned as raw. Input
// that is not JSON is returned unchanged.
func Compact(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// TestClock is a merchant's test-mode clock: the time every test-mode
// timestamp, renewal and expiry of that merchant follows.
type TestClock struct {
	Object string    `json:"object"` // "test_clock"
	Now    time.Time `json:"now"`
	// Raw is the object exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

func (v *TestClock) setRaw(b json.RawMessage) { v.Raw = b }

// GetTestClock returns the test clock of the key's merchant (GET
// /v1/test_helpers/clock). It fails with an *Error of code invalid_request
// for a live key, and resource_not_found (404) from a daemon without test
// clocks.
func (c *Client) GetTestClock(ctx context.Context, opts ...CallOption) (*TestClock, error) {
	r, err := newRequest(http.MethodGet, "/v1/test_helpers/clock", nil, true, opts)
	if err != nil {
		return nil, err
	}
	return call[TestClock](ctx, c, r)
}

// TestClockAdvanceParams is the body of POST /v1/test_helpers/clock/advance:
// give By or To.
type TestClockAdvanceParams struct {
	// By is a duration with unit s, m, h or d, e.g. "30d".
	By string `json:"by,omitempty"`
	// To is the new time; it must not be before the clock's.
	To *time.Time `json:"to,omitempty"`
}

// AdvanceTestClock moves the test clock forward (POST
// /v1/test_helpers/clock/advance) and returns it once every renewal,
// retry, expiry and lapse due by the new time has run. It fails with an
// *Error of code invalid_request (a live key, a bad duration, a time in the
// past) or resource_not_found (404) from a daemon without test clocks.
func (c *Client) AdvanceTestClock(ctx context.Context, p TestClockAdvanceParams, opts ...CallOption) (*TestClock, error) {
	// Advancing to a given time is idempotent; by a duration is not.
	return create[TestClock](ctx, c, "/v1/test_helpers/clock/advance", p, p.By == "" && p.To != nil, opts)
}
